import Benchmark
@_spi(Benchmarks) import LightstreamerClient

/// Ten-field stock rows as a server sends them after the first update: some fields changed,
/// others marked unchanged (empty tokens), a `^N` run now and then.
enum ClientFixture {
    static let fields = ["stock_name", "last_price", "time", "pct_change", "bid_quantity", "bid", "ask", "ask_quantity", "min", "max"]
    static let lines: [String] = (0..<64).map { i in
        let price = 100 + Double(i % 17) / 4
        if i == 0 {
            return "U,1,1,ACME Corp|\(price)|12:00:10|0.1|1000|\(price - 0.05)|\(price + 0.05)|3000|99.5|103.25"
        }
        if i % 8 == 0 { return "U,1,1,|\(price)|12:00:\(10 + i % 50)|^7" }
        return "U,1,1,|\(price)|12:00:\(10 + i % 50)|0.\(i % 9)|\(1000 + i % 3 * 500)|\(price - 0.05)|\(price + 0.05)||99.5|"
    }
}

/// Counts updates and reads two fields, as an application would.
final class CountingDelegate: SubscriptionDelegate, @unchecked Sendable {
    var count = 0
    var last: String?
    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {}
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {
        count += 1
        last = itemUpdate.value(withFieldPos: 2)
        if itemUpdate.isValueChanged(withFieldPos: 3) { blackHole(itemUpdate.value(withFieldPos: 3)) }
    }
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidSubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) {}
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {}
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal, .instructions],
        scalingFactor: .kilo, maxDuration: .seconds(3))

    // Engine only: parse, decode against the item's values, build the ItemUpdate, store the
    // values for valueWith…, call the delegate. One iteration = one U line = one update.
    Benchmark("Client engine: U line to delegate (10 fields, MERGE)") { benchmark in
        let delegate = CountingDelegate()
        let bench = EngineDeliveryBench(fields: ClientFixture.fields, delegate: delegate)
        bench.feed(ClientFixture.lines[0])
        let lines = ClientFixture.lines
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            bench.feed(lines[1 + i % (lines.count - 1)])
        }
        benchmark.stopMeasurement()
        blackHole(delegate.count)
    }

    // The whole runtime minus sockets: batches of 64 lines enter as a socket read would, cross
    // the engine queue and reach the delegate on the callback queue. One iteration = one update.
    Benchmark("Client runtime: U lines to delegate via queues (10 fields, MERGE, batches of 64)") { benchmark in
        let delegate = CountingDelegate()
        let bench = ClientDeliveryBench(fields: ClientFixture.fields, delegate: delegate)
        bench.feed([ClientFixture.lines[0]])
        bench.drain()
        let batch = Array(ClientFixture.lines.dropFirst()) + [ClientFixture.lines[1]]
        benchmark.startMeasurement()
        for _ in 0..<max(1, benchmark.scaledIterations.count / batch.count) {
            bench.feed(batch)
        }
        bench.drain()
        benchmark.stopMeasurement()
        blackHole(delegate.count)
    }
}
