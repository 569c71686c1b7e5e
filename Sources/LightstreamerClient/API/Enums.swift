/// Top-level value types of the public API (docs/protocol/CLIENT-API.md §1).

/// A time value in milliseconds, as used by every timing option.
public typealias Millis = Int

/// The transports `ConnectionOptions.forcedTransport` can force. The raw values are the
/// strings the official API uses.
public enum TransportSelection: String, CustomStringConvertible, Sendable, CaseIterable {
    /// WebSocket, streaming or polling.
    case WS = "WS"
    /// WebSocket streaming only.
    case WS_STREAMING = "WS-STREAMING"
    /// WebSocket polling only.
    case WS_POLLING = "WS-POLLING"
    /// HTTP, streaming or polling.
    case HTTP = "HTTP"
    /// HTTP streaming only.
    case HTTP_STREAMING = "HTTP-STREAMING"
    /// HTTP polling only.
    case HTTP_POLLING = "HTTP-POLLING"

    /// The transport's name (the raw value).
    public var description: String { rawValue }
}

/// The bandwidth limit requested for a session, in kilobits per second.
public enum RequestedMaxBandwidth: Equatable, CustomStringConvertible, Sendable {
    /// At most this many kilobits per second.
    case limited(Double)
    /// No limit asked for.
    case unlimited

    /// `unlimited` or the number of kilobits per second.
    public var description: String {
        switch self {
        case .limited(let v): return "\(v) kilobits/sec"
        case .unlimited: return "unlimited"
        }
    }
}

/// The bandwidth limit the server applies to a session, in kilobits per second.
public enum RealMaxBandwidth: Equatable, CustomStringConvertible, Sendable {
    /// At most this many kilobits per second.
    case limited(Double)
    /// No limit.
    case unlimited
    /// Bandwidth management is not available to the client.
    case unmanaged

    /// `unlimited`, `unmanaged` or the number of kilobits per second.
    public var description: String {
        switch self {
        case .limited(let v): return "\(v) kilobits/sec"
        case .unlimited: return "unlimited"
        case .unmanaged: return "unmanaged"
        }
    }
}

/// The update frequency the server grants a subscription, in updates per second.
public enum RealMaxFrequency: Equatable, CustomStringConvertible, Sendable {
    /// At most this many updates per second per item.
    case limited(Double)
    /// No limit.
    case unlimited

    /// `unlimited` or the number of updates per second.
    public var description: String {
        switch self {
        case .limited(let v): return "\(v) updates/sec"
        case .unlimited: return "unlimited"
        }
    }
}

/// Levels of `ConsoleLogger`.
public enum ConsoleLogLevel: Int, Sendable {
    /// Trace lines and above (everything).
    case trace = -10
    /// Debug lines and above.
    case debug = 0
    /// Information lines and above.
    case info = 10
    /// Warnings and above.
    case warn = 25
    /// Errors and above.
    case error = 50
    /// Fatal errors only.
    case fatal = 100
}
