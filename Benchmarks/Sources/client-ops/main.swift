// Runs the client's delivery path N times, for instruction counts under callgrind
// (Benchmarks/client-callgrind.sh) or a quick CPU-time figure. Fixture: the same 10-field MERGE
// stock rows as the ClientBenchmarks suite. Modes:
//   engine  one U line through the real engine to a delegate (EngineDeliveryBench), one thread
//   runtime batches of 64 lines through the engine queue and the callback queue (ClientDeliveryBench)
import Dispatch
@_spi(Benchmarks) import LightstreamerClient

#if canImport(Glibc)
import Glibc
#endif

let fields = ["stock_name", "last_price", "time", "pct_change", "bid_quantity", "bid", "ask", "ask_quantity", "min", "max"]
let lines: [String] = (0..<64).map { i in
    let price = 100 + Double(i % 17) / 4
    if i == 0 {
        return "U,1,1,ACME Corp|\(price)|12:00:10|0.1|1000|\(price - 0.05)|\(price + 0.05)|3000|99.5|103.25"
    }
    if i % 8 == 0 { return "U,1,1,|\(price)|12:00:\(10 + i % 50)|^7" }
    return "U,1,1,|\(price)|12:00:\(10 + i % 50)|0.\(i % 9)|\(1000 + i % 3 * 500)|\(price - 0.05)|\(price + 0.05)||99.5|"
}

/// Counts updates and reads two fields, as an application would (as in ClientBenchmarks).
final class CountingDelegate: SubscriptionDelegate, @unchecked Sendable {
    var count = 0
    var sink = 0
    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {}
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {
        count += 1
        sink &+= itemUpdate.value(withFieldPos: 2)?.utf8.count ?? 0
        if itemUpdate.isValueChanged(withFieldPos: 3) { sink &+= itemUpdate.value(withFieldPos: 3)?.utf8.count ?? 0 }
    }
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidSubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) {}
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {}
}

func cpuSeconds() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
}

let mode = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "engine"
let n = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2])! : 1_000_000
let delegate = CountingDelegate()
var cpu = 0.0
switch mode {
case "engine":
    let bench = EngineDeliveryBench(fields: fields, delegate: delegate)
    bench.feed(lines[0])
    let start = cpuSeconds()
    for i in 0..<n { bench.feed(lines[1 + i % (lines.count - 1)]) }
    cpu = cpuSeconds() - start
default:
    let bench = ClientDeliveryBench(fields: fields, delegate: delegate)
    bench.feed([lines[0]])
    bench.drain()
    let batch = Array(lines.dropFirst()) + [lines[1]]
    let start = cpuSeconds()
    for _ in 0..<(n / batch.count) { bench.feed(batch) }
    bench.drain()
    cpu = cpuSeconds() - start
}
let updates = delegate.count - 1
print(
    mode, "updates:", updates, "cpu s:", cpu, "updates per CPU-second:", updates > 0 && cpu > 0 ? Int(Double(updates) / cpu) : 0,
    "sink:", delegate.sink)
