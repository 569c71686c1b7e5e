import Foundation
import LightstreamerClient

/// One soak session: a `LightstreamerClient` forced on one transport, subscribed MERGE
/// unfiltered to `counter` and to one stock-like item, optionally with an MPN device.
/// `@unchecked Sendable`: every property is a `let` set at creation; the probes lock their own state.
final class SoakClient: @unchecked Sendable {
    static let transports: [TransportSelection] = [.WS_STREAMING, .HTTP_STREAMING, .WS_POLLING, .HTTP_POLLING]

    let client: LightstreamerClient
    let probe: CounterProbe
    let transport: TransportSelection
    let mpn: MPNProbe?

    init(index: Int, serverAddress: String, adapterSet: String, stockItems: Int, withMPN: Bool) {
        transport = Self.transports[index % Self.transports.count]
        client = LightstreamerClient(serverAddress: serverAddress, adapterSet: adapterSet)
        client.connectionOptions.forcedTransport = transport
        client.connectionOptions.retryDelay = 1000
        client.connectionOptions.idleTimeout = 1000
        // Polling clients ask once a second (batches of ~rate updates), not as fast as updates
        // come: with the counter at 20/s an immediate re-poll would open 20 HTTP connections a
        // second per client.
        if transport == .WS_POLLING || transport == .HTTP_POLLING { client.connectionOptions.pollingInterval = 1000 }
        probe = CounterProbe(index: index)
        probe.attach(to: client)
        client.addDelegate(probe)

        let counter = Subscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
        counter.requestedMaxFrequency = .unfiltered
        counter.addDelegate(probe)
        client.subscribe(counter)
        if stockItems > 0 {
            let stock = Subscription(subscriptionMode: .MERGE, item: "quote\(index % stockItems + 1)", fields: ["last", "volume"])
            stock.addDelegate(probe)
            client.subscribe(stock)
        }
        if withMPN {
            let mpn = MPNProbe()
            client.register(forMPN: mpn.device)
            self.mpn = mpn
        } else {
            mpn = nil
        }
    }

    func connect() { client.connect() }
    func disconnect() { client.disconnect() }

    /// Once the device is registered: the ticker subscription (notified at each update).
    func subscribeTicker(item: String, field: String) {
        guard let mpn else { return }
        client.subscribeMPN(mpn.tickerSubscription(item: item, field: field), coalescing: false)
    }

    /// A trigger subscription on `counter` that should fire `ahead` counts from now.
    func subscribeTrigger(ahead: Int) {
        guard let mpn, let last = probe.snapshot.lastCount else { return }
        client.subscribeMPN(mpn.triggerSubscription(threshold: last + ahead), coalescing: false)
    }
}
