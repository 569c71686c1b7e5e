import Dispatch
@_spi(Benchmarks) import LightstreamerServer

// server-ops TICKS [SESSIONS] [ITEMS] [ITEMS_PER_SESSION] [BATCHED]
// Sets up SESSIONS sessions (default 1,000) subscribed to ITEMS_PER_SESSION (10) of ITEMS
// (100) items, runs 3 warm-up ticks, then TICKS ticks (every item updated once per tick,
// fanned out to its subscribers and written by their sessions), and prints the U lines the
// TICKS ticks wrote. Run it under valgrind with TICKS and with 0: the difference is the cost
// of the ticks alone (Benchmarks/server-callgrind.sh). BATCHED 1: each tick reaches the engine
// as one batch of updates (`ItemEventListener.update(_:)`) instead of item by item.
let args = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let ticks = args.count > 0 ? args[0] : 10
let sessions = args.count > 1 ? args[1] : 1_000
let items = args.count > 2 ? args[2] : 100
let perSession = args.count > 3 ? args[3] : 10
let batched = args.count > 4 && args[4] == 1

final class Box: @unchecked Sendable { var bench: FanOutBench? }
let box = Box()
let ready = DispatchSemaphore(value: 0)
// Detached: top-level code runs on the main actor, which the wait below blocks.
Task.detached {
    box.bench = try await FanOutBench(sessions: sessions, items: items, itemsPerSession: perSession)
    ready.signal()
}
ready.wait()
guard let bench = box.bench else { fatalError("set-up failed") }
for _ in 0..<3 { bench.tick(batched: batched) }
var lines = 0
for _ in 0..<ticks { lines += bench.tick(batched: batched) }
print("\(lines) U lines in \(ticks) ticks")
