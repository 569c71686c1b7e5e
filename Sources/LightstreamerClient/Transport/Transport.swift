/// The boundary between the runtime and the network: the runtime opens connections through a
/// `TransportFactory` and gets their events back. The NIO implementation is
/// `NIOTransportFactory`; tests may plug in others.

/// Events of one connection.
enum TransportEvent: Sendable {
    /// The WebSocket handshake completed.
    case opened
    /// Complete lines (without CR-LF) received together.
    case lines([String])
    /// The peer ended the connection or the HTTP response ended.
    case closed
    case failed(String)
}

/// An open connection.
protocol TransportConnection: Sendable {
    /// Sends one WebSocket text message (ignored by HTTP requests).
    func send(_ text: String)
    func close()
    /// Breaks the connection as a network failure would (its end is reported). Test hook.
    func abort()
}

extension TransportConnection {
    func abort() { close() }
}

protocol TransportFactory: Sendable {
    func openWebSocket(url: String, headers: [String: String],
                       events: @escaping @Sendable (TransportEvent) -> Void) -> TransportConnection
    func post(url: String, body: String, headers: [String: String],
              events: @escaping @Sendable (TransportEvent) -> Void) -> TransportConnection
}
