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
    /// Refused locally for good, with a client error code (62: TLS key not among the pins).
    case rejected(code: Int, message: String)
}

/// What a TLS (https/wss) connection checks besides standard validation.
struct TLSPolicy: Sendable, Hashable {
    var pins = CertificatePins([])
    /// Extra trusted roots (PEM), for tests.
    var additionalTrustRootsPEM: [String] = []

    static let standard = TLSPolicy()
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
    /// The same with a TLS policy (certificate pins); factories without TLS ignore it.
    func openWebSocket(url: String, headers: [String: String], tls: TLSPolicy,
                       events: @escaping @Sendable (TransportEvent) -> Void) -> TransportConnection
    func post(url: String, body: String, headers: [String: String], tls: TLSPolicy,
              events: @escaping @Sendable (TransportEvent) -> Void) -> TransportConnection
}

extension TransportFactory {
    func openWebSocket(url: String, headers: [String: String], tls: TLSPolicy,
                       events: @escaping @Sendable (TransportEvent) -> Void) -> TransportConnection {
        openWebSocket(url: url, headers: headers, events: events)
    }

    func post(url: String, body: String, headers: [String: String], tls: TLSPolicy,
              events: @escaping @Sendable (TransportEvent) -> Void) -> TransportConnection {
        post(url: url, body: body, headers: headers, events: events)
    }
}
