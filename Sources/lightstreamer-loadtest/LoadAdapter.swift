import Foundation
import LightstreamerServer
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A Data Adapter for load tests: items `load0`…`loadN-1`, each with the one field `ts`
/// (the monotonic time in nanoseconds at which the update was produced), all updated `rate`
/// times per second by one timer. A tick goes to the server as one batch
/// (`ItemEventListener.update(_:)`), or item by item with `batched` false.
///
/// `phases`: with 1 (the default, the benchmark's shape since it began) every item is updated
/// at the same moment of each period, the harshest burst a server can get. With P > 1 the
/// items go in P groups of consecutive numbers (`LoadPhases`), one group every period / P, as
/// a feed whose items change at different moments: each item is still updated `rate` times a
/// second. The load tools subscribe each session to ten consecutive items from a multiple of
/// ten, so with 100 items and a P that divides 10 a session's items of a period still come
/// together: one write per session and period, as with 1.
final class LoadDataAdapter: DataAdapter {
    let itemCount: Int
    let rate: Double
    let batched: Bool
    let phases: Int
    private let listener = NIOLockedValueBox<(any ItemEventListener)?>(nil)
    /// Subscribed items and the phase of each.
    private let subscribed = NIOLockedValueBox<[String: Int]>([:])
    private let task = NIOLockedValueBox<Scheduled<Void>?>(nil)
    private let stopped = NIOLockedValueBox(false)

    init(itemCount: Int, rate: Double, batched: Bool = true, phases: Int = 1) {
        self.itemCount = itemCount
        self.rate = rate
        self.batched = batched
        self.phases = max(phases, 1)
    }

    /// Ticks at a fixed rate: tick k is due at start + k × interval, however long the previous
    /// ones took (a late producer runs its ticks back to back instead of lowering the rate).
    /// With several phases, a tick is one phase's group, and the interval a period / phases.
    func start(on loop: any EventLoop) {
        let interval = TimeAmount.nanoseconds(max(Int64(1_000_000_000 / rate) / Int64(phases), 1))
        schedule(at: .now() + interval, interval: interval, phase: 0, on: loop)
    }

    private func schedule(at deadline: NIODeadline, interval: TimeAmount, phase: Int, on loop: any EventLoop) {
        let t = loop.scheduleTask(deadline: deadline) { [self] in
            tick(phase: phase)
            if !stopped.withLockedValue({ $0 }) {
                schedule(at: deadline + interval, interval: interval, phase: (phase + 1) % phases, on: loop)
            }
        }
        task.withLockedValue { $0 = t }
    }

    func stop() {
        stopped.withLockedValue { $0 = true }
        task.withLockedValue { $0?.cancel() }
    }

    /// Updates the subscribed items of `phase` (every subscribed item with one phase).
    func tick(phase: Int) {
        guard let l = listener.withLockedValue({ $0 }) else { return }
        let items = subscribed.withLockedValue { $0.filter { $0.value == phase }.keys }
        guard batched else {
            for item in items {
                let ts = String(NIODeadline.now().uptimeNanoseconds)
                l.update(item: item, fields: ["ts": ts], isSnapshot: false)
            }
            return
        }
        // Each update's time is taken when it is made, as item by item.
        var batch: [ItemUpdateEvent] = []
        batch.reserveCapacity(items.count)
        for item in items {
            batch.append(ItemUpdateEvent(item: item, fields: ["ts": String(NIODeadline.now().uptimeNanoseconds)]))
        }
        l.update(batch)
    }

    func setListener(_ listener: any ItemEventListener) { self.listener.withLockedValue { $0 = listener } }
    func subscribe(item: String) async throws {
        let phase = LoadPhases.phase(of: item, itemCount: itemCount, phases: phases)
        subscribed.withLockedValue { $0[item] = phase }
    }
    func unsubscribe(item: String) async { _ = subscribed.withLockedValue { $0.removeValue(forKey: item) } }
    func isSnapshotAvailable(item: String) -> Bool { false }
}

/// Which group of a `LoadDataAdapter`'s items an item is updated with.
enum LoadPhases {
    /// Item `loadK` (0 ≤ K < `itemCount`) is in phase K × phases / itemCount: groups of
    /// consecutive numbers, in order. Any other name (a client may subscribe to any) is in
    /// phase 0.
    static func phase(of item: String, itemCount: Int, phases: Int) -> Int {
        guard phases > 1, itemCount > 0, item.hasPrefix("load"), let k = Int(item.dropFirst(4)), k >= 0, k < itemCount
        else { return 0 }
        let (product, overflow) = k.multipliedReportingOverflow(by: phases)
        return overflow ? 0 : min(product / itemCount, phases - 1)
    }
}

/// User + system CPU time of this process, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    let who = RUSAGE_SELF.rawValue
    #else
    let who = RUSAGE_SELF
    #endif
    guard getrusage(who, &usage) == 0 else { return 0 }
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Resident memory of this process, in bytes (Linux `/proc/self/statm`).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let parts = text.split(separator: " ")
    guard parts.count > 1, let pages = Int(parts[1]) else { return 0 }
    return pages * 4096
}
