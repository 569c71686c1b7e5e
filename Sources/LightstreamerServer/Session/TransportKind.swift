/// The transport a request or stream travels on.
public enum TransportKind: Sendable, Hashable {
    /// WebSocket.
    case webSocket
    /// HTTP.
    case http
}
