import NIOConcurrencyHelpers

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
    func openWebSocket(
        url: String, headers: [String: String],
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection
    func post(
        url: String, body: String, headers: [String: String],
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection
    /// The same with a TLS policy (certificate pins); factories without TLS ignore it.
    func openWebSocket(
        url: String, headers: [String: String], tls: TLSPolicy,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection
    func post(
        url: String, body: String, headers: [String: String], tls: TLSPolicy,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection
    /// The same with a read gate: the connection stops reading from the network while the gate
    /// is closed (factories without flow control ignore it).
    func openWebSocket(
        url: String, headers: [String: String], tls: TLSPolicy, gate: ReadGate,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection
    func post(
        url: String, body: String, headers: [String: String], tls: TLSPolicy, gate: ReadGate,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection
}

extension TransportFactory {
    func openWebSocket(
        url: String, headers: [String: String], tls: TLSPolicy,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        openWebSocket(url: url, headers: headers, events: events)
    }

    func post(
        url: String, body: String, headers: [String: String], tls: TLSPolicy,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        post(url: url, body: body, headers: headers, events: events)
    }

    func openWebSocket(
        url: String, headers: [String: String], tls: TLSPolicy, gate: ReadGate,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        openWebSocket(url: url, headers: headers, tls: tls, events: events)
    }

    func post(
        url: String, body: String, headers: [String: String], tls: TLSPolicy, gate: ReadGate,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        post(url: url, body: body, headers: headers, tls: tls, events: events)
    }
}

/// Flow control between the network and the application: counts the lines received and not
/// yet delivered (their callbacks not yet run). Above `high` the gate closes: transports stop
/// reading from their sockets (TCP then pushes back on the server) until the count falls to
/// `low`. So however fast the server sends and however slow the application's callbacks are,
/// the lines and updates queued inside the client stay bounded.
final class ReadGate: Sendable {
    private struct State {
        var inFlight = 0
        var waiters: [@Sendable () -> Void] = []
    }

    let high: Int
    let low: Int
    private let state = NIOLockedValueBox(State())

    init(high: Int = 8192, low: Int = 2048) {
        self.high = high
        self.low = low
    }

    /// Lines handed to the client.
    func add(_ n: Int) { state.withLockedValue { $0.inFlight += n } }

    /// Lines whose callbacks have run: wakes the waiting transports once the count is low.
    func remove(_ n: Int) {
        let low = self.low
        let wake: [@Sendable () -> Void] = state.withLockedValue { s in
            s.inFlight -= n
            guard s.inFlight <= low, !s.waiters.isEmpty else { return [] }
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in wake { w() }
    }

    /// Before a transport reads more: true to go ahead; false when the gate is closed, and then
    /// `resume` is called once it opens again.
    func admit(orWhenOpen resume: @escaping @Sendable () -> Void) -> Bool {
        let high = self.high
        return state.withLockedValue { s in
            if s.inFlight < high { return true }
            s.waiters.append(resume)
            return false
        }
    }

    var linesInFlight: Int { state.withLockedValue { $0.inFlight } }
}
