import TLCP

/// The client status, engine side (mirrors `LightstreamerClient.Status`).
enum ClientStatus: String, Sendable, Hashable {
    case connecting = "CONNECTING"
    case connectedStreamSensing = "CONNECTED:STREAM-SENSING"
    case connectedWSStreaming = "CONNECTED:WS-STREAMING"
    case connectedHTTPStreaming = "CONNECTED:HTTP-STREAMING"
    case connectedWSPolling = "CONNECTED:WS-POLLING"
    case connectedHTTPPolling = "CONNECTED:HTTP-POLLING"
    case stalled = "STALLED"
    case willRetry = "DISCONNECTED:WILL-RETRY"
    case tryingRecovery = "DISCONNECTED:TRYING-RECOVERY"
    case disconnected = "DISCONNECTED"

    var isDisconnected: Bool { self == .disconnected || self == .willRetry || self == .tryingRecovery }
}
