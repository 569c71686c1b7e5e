import Dispatch
import NIOConcurrencyHelpers

/// Entry points for the benchmarks in `Benchmarks/` (SPI, not public API): they run server
/// lines through the real engine and deliver the updates to a real delegate.

/// The engine alone: lines in, updates delivered synchronously to the delegate (no queues).
@_spi(Benchmarks)
public final class EngineDeliveryBench {
    private var engine: SessionEngine
    private let subscription: Subscription
    private let delegate: SubscriptionDelegate
    private(set) public var delivered = 0

    /// A connected WS session with one MERGE subscription of one item with `fields`.
    public init(fields: [String], delegate: SubscriptionDelegate) {
        var settings = SessionEngine.Settings()
        settings.serverAddress = "http://bench"
        engine = SessionEngine(settings: settings, seed: 1)
        subscription = Subscription(subscriptionMode: .MERGE, items: ["item1"], fields: fields)
        self.delegate = delegate
        _ = engine.handle(.subscribe(key: 1, spec: subscription.spec), now: 0)
        _ = engine.handle(.connect, now: 0)
        _ = engine.handle(.webSocketOpened(1), now: 0)
        for line in ["WSOK", "CONOK,S1,50000,5000,*", "SUBOK,1,1,\(fields.count)"] {
            _ = engine.handle(.lineReceived(1, line), now: 0)
        }
    }

    /// One server line through the engine; updates go to the delegate.
    public func feed(_ line: String) {
        for action in engine.handle(.lineReceived(1, line), now: 0) {
            if case .notify(.subscription(_, .update(let u))) = action {
                subscription.store(u)
                delegate.subscription(subscription, didUpdateItem: u)
                delivered += 1
            }
        }
    }
}

/// The whole client runtime minus sockets: lines enter as a transport would deliver them (on
/// another thread, in batches), go through the engine queue, and reach the delegate on the
/// callback queue.
@_spi(Benchmarks)
public final class ClientDeliveryBench: Sendable {
    private let transport = BenchTransport()
    public let client: LightstreamerClient

    public init(fields: [String], delegate: SubscriptionDelegate) {
        client = LightstreamerClient("http://bench", adapterSet: nil, transport: transport)
        let sub = Subscription(subscriptionMode: .MERGE, items: ["item1"], fields: fields)
        sub.addDelegate(delegate)
        client.subscribe(sub)
        client.connect()
        client.core.queue.sync {}
        transport.deliver(.opened)
        transport.deliver(.lines(["WSOK", "CONOK,S1,50000,5000,*", "SUBOK,1,1,\(fields.count)"]))
        drain()
    }

    /// A batch of lines, as one read from the socket.
    public func feed(_ lines: [String]) { transport.deliver(.lines(lines)) }

    /// Waits until everything fed so far reached the delegates.
    public func drain() {
        client.core.queue.sync {}
        CallbackQueue.queue.sync {}
    }
}

final class BenchTransport: TransportFactory, Sendable {
    /// The handler inside a struct of its own: a closure stored straight in the generic box is
    /// converted to the box's representation and back by every `withLockedValue` (its `inout`
    /// writes the value back), each time inside one more pair of wrappers, so every call took
    /// longer than the last (3 M lines cost 63 times the CPU of 300 K).
    struct Handler {
        let call: @Sendable (TransportEvent) -> Void
    }
    private let handler = NIOLockedValueBox<Handler?>(nil)

    struct Connection: TransportConnection {
        func send(_ text: String) {}
        func close() {}
    }

    func deliver(_ e: TransportEvent) { handler.withLockedValue { $0 }?.call(e) }

    func openWebSocket(url: String, headers: [String: String], events: @escaping @Sendable (TransportEvent) -> Void) -> TransportConnection
    {
        handler.withLockedValue { $0 = Handler(call: events) }
        return Connection()
    }

    func post(
        url: String, body: String, headers: [String: String], events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        Connection()
    }
}
