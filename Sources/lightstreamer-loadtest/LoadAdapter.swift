import Foundation
import LightstreamerServer
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A Data Adapter for load tests: items `load0`…`loadN-1`, each with the one field `ts`
/// (the monotonic time in nanoseconds at which the update was produced), all updated `rate`
/// times per second by one timer. A tick goes to the server as one batch
/// (`ItemEventListener.update(_:)`), or item by item with `batched` false.
final class LoadDataAdapter: DataAdapter {
    let itemCount: Int
    let rate: Double
    let batched: Bool
    private let listener = NIOLockedValueBox<(any ItemEventListener)?>(nil)
    private let subscribed = NIOLockedValueBox<Set<String>>([])
    private let task = NIOLockedValueBox<Scheduled<Void>?>(nil)
    private let stopped = NIOLockedValueBox(false)

    init(itemCount: Int, rate: Double, batched: Bool = true) {
        self.itemCount = itemCount
        self.rate = rate
        self.batched = batched
    }

    /// Ticks at a fixed rate: tick k is due at start + k × interval, however long the previous
    /// ones took (a late producer runs its ticks back to back instead of lowering the rate).
    func start(on loop: any EventLoop) {
        let interval = TimeAmount.nanoseconds(Int64(1_000_000_000 / rate))
        schedule(at: .now() + interval, interval: interval, on: loop)
    }

    private func schedule(at deadline: NIODeadline, interval: TimeAmount, on loop: any EventLoop) {
        let t = loop.scheduleTask(deadline: deadline) { [self] in
            tick()
            if !stopped.withLockedValue({ $0 }) { schedule(at: deadline + interval, interval: interval, on: loop) }
        }
        task.withLockedValue { $0 = t }
    }

    func stop() {
        stopped.withLockedValue { $0 = true }
        task.withLockedValue { $0?.cancel() }
    }

    private func tick() {
        guard let l = listener.withLockedValue({ $0 }) else { return }
        let items = subscribed.withLockedValue { $0 }
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
    func subscribe(item: String) async throws { _ = subscribed.withLockedValue { $0.insert(item) } }
    func unsubscribe(item: String) async { _ = subscribed.withLockedValue { $0.remove(item) } }
    func isSnapshotAvailable(item: String) -> Bool { false }
}

/// Resident memory of this process, in bytes (Linux `/proc/self/statm`).
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

func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let parts = text.split(separator: " ")
    guard parts.count > 1, let pages = Int(parts[1]) else { return 0 }
    return pages * 4096
}
