/// Top-level value types of the public API (docs/protocol/CLIENT-API.md §1).

/// A time value in milliseconds, as used by every timing option.
public typealias Millis = Int

/// The transports `ConnectionOptions.forcedTransport` can force. The raw values are the
/// strings the official API uses.
public enum TransportSelection: String, CustomStringConvertible, Sendable, CaseIterable {
    case WS = "WS"
    case WS_STREAMING = "WS-STREAMING"
    case WS_POLLING = "WS-POLLING"
    case HTTP = "HTTP"
    case HTTP_STREAMING = "HTTP-STREAMING"
    case HTTP_POLLING = "HTTP-POLLING"

    /// The transport's name (the raw value).
    public var description: String { rawValue }
}

/// The bandwidth limit requested for a session, in kilobits per second.
public enum RequestedMaxBandwidth: Equatable, CustomStringConvertible, Sendable {
    case limited(Double)
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
    case limited(Double)
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
    case limited(Double)
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
    case trace = -10
    case debug = 0
    case info = 10
    case warn = 25
    case error = 50
    case fatal = 100
}
