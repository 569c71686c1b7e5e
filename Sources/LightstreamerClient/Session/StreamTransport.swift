import TLCP

/// The four ways a session can receive its data.
enum StreamTransport: String, Sendable, Hashable {
    case wsStreaming = "WS-STREAMING"
    case httpStreaming = "HTTP-STREAMING"
    case wsPolling = "WS-POLLING"
    case httpPolling = "HTTP-POLLING"

    var isWebSocket: Bool { self == .wsStreaming || self == .wsPolling }
    var isPolling: Bool { self == .wsPolling || self == .httpPolling }

    var connectedStatus: ClientStatus {
        switch self {
        case .wsStreaming: return .connectedWSStreaming
        case .httpStreaming: return .connectedHTTPStreaming
        case .wsPolling: return .connectedWSPolling
        case .httpPolling: return .connectedHTTPPolling
        }
    }

    /// The cause prefix official clients use in `LS_cause` (`ws.…` or `http.…`).
    var causePrefix: String { isWebSocket ? "ws" : "http" }
}
