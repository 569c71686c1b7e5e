import Foundation
import Testing

@testable import LightstreamerServer

/// Snapshots the Data Adapter sends after the subscription started, delivery while the sink is
/// busy, and the real-time clock.
@Suite struct ItemsDeliveryTests {
    @Test func subscribersWaitForTheAdaptersSnapshot() async throws {
        let adapter = ScriptedDataAdapter(snapshotItems: ["d", "c", "m"])
        let engine = makeEngine(adapter)
        let distinct = RecordingSink()
        let command = RecordingSink()
        let noSnapshot = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["d"], ["v"], snapshot: .yes), sink: distinct)
        _ = try await engine.subscribe(spec(.distinct, ["d"], ["v"]), sink: noSnapshot)
        _ = try await engine.subscribe(spec(.command, ["c"], ["key", "command"], snapshot: .yes), sink: command)
        #expect(distinct.take().isEmpty && command.take().isEmpty)

        adapter.push("d", ["v": "s1"], snapshot: true)
        adapter.push("d", ["v": "s2"], snapshot: true)
        #expect(distinct.take().isEmpty) // not before the end of the snapshot
        adapter.endOfSnapshot("d")
        #expect(distinct.take() == [update(1, ["s1"], snapshot: true), update(1, ["s2"], snapshot: true), .endOfSnapshot(item: 1)])
        #expect(noSnapshot.take().isEmpty) // snapshot events are not live events
        adapter.push("d", ["v": "live"])
        #expect(distinct.takeRows() == [["live"]])
        #expect(noSnapshot.takeRows() == [["live"]])

        // A live event also ends the adapter's snapshot.
        adapter.push("c", ["key": "k", "command": "ADD"], snapshot: true)
        adapter.push("c", ["key": "j", "command": "ADD"])
        #expect(command.take() == [update(1, ["k", "ADD"], snapshot: true), .endOfSnapshot(item: 1), update(1, ["j", "ADD"])])

        // MERGE is served by the first snapshot event.
        let merge = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["m"], ["v"], snapshot: .yes), sink: merge)
        adapter.push("m", ["v": "first"], snapshot: true)
        #expect(merge.take() == [update(1, ["first"], snapshot: true)])
    }

    @Test func noEventReachesTheSinkAfterUnsubscribeReturns() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let sink = SlowSink()
        let handle = try await engine.subscribe(spec(.raw, ["a"], ["n"]), sink: sink)
        let producer = Thread {
            // 2,000 × 2 ms: a loaded machine still unsubscribes long before the last one.
            for i in 0..<2_000 { adapter.push("a", ["n": "\(i)"]) }
        }
        producer.start()
        while sink.count < 3 { try await Task.sleep(for: .milliseconds(1)) }
        await engine.unsubscribe(handle)
        sink.markUnsubscribed()
        try await Task.sleep(for: .milliseconds(50))
        #expect(!sink.deliveredAfterUnsubscribe)
        #expect(sink.count < 2_000)
    }

    @Test func eventsPostedToAQueueReachTheSinkBeforeUnsubscribeReturns() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let queue = HoldingQueue()
        let sink = QueuedRecordingSink(queue: queue)
        let handle = try await engine.subscribe(spec(.raw, ["a"], ["n"]), sink: sink)
        for i in 0..<10 { adapter.push("a", ["n": "\(i)"]) }
        // Posted in groups, held by the queue: nothing reached the sink yet.
        #expect(sink.rows.isEmpty)
        #expect(queue.held == 10)
        await engine.unsubscribe(handle)
        #expect(sink.rows == (0..<10).map { ["\($0)"] })
        for i in 10..<20 { adapter.push("a", ["n": "\(i)"]) }
        #expect(queue.held == 0)
        queue.flush()
        #expect(sink.rows.count == 10)
    }

    @Test func systemClockEnforcesTheLimitInRealTime() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = ItemEngine(adapterSets: [AdapterSet(name: "SET", dataAdapters: ["DEFAULT": adapter])])
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a"], ["n"], frequency: .limited(20)), sink: sink)
        let start = ContinuousClock.now
        adapter.push("a", ["n": "1"])
        adapter.push("a", ["n": "2"])
        adapter.push("a", ["n": "3"])
        #expect(sink.events.count == 1)
        while sink.events.count < 2 && ContinuousClock.now - start < .seconds(2) {
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = ContinuousClock.now - start
        #expect(sink.takeRows() == [["1"], ["3"]])
        #expect(elapsed >= .milliseconds(40) && elapsed < .seconds(2))
        await engine.shutdown()
    }
}

/// A sink that takes its time and notices deliveries after the unsubscribe.
final class SlowSink: TableSink, @unchecked Sendable {
    private let lock = NSLock()
    private var _count = 0
    private var unsubscribed = false
    private var _late = false

    func deliver(_ event: TableEvent) {
        usleep(2_000)
        lock.withLock {
            _count += 1
            if unsubscribed { _late = true }
        }
    }

    func markUnsubscribed() { lock.withLock { unsubscribed = true } }
    var count: Int { lock.withLock { _count } }
    var deliveredAfterUnsubscribe: Bool { lock.withLock { _late } }
}

/// A `TableEventQueue` that hands events over only when flushed.
final class HoldingQueue: TableEventQueue, @unchecked Sendable {
    private let lock = NSLock()
    private var events: [QueuedTableEvent] = []
    private var _postSizes: [Int] = []

    func post(_ events: [QueuedTableEvent]) -> Bool {
        lock.withLock {
            self.events += events
            _postSizes.append(events.count)
        }
        return false
    }
    /// The number of events of each `post` so far.
    var postSizes: [Int] { lock.withLock { _postSizes } }
    func flush() {
        let taken = lock.withLock {
            defer { events = [] }
            return events
        }
        for e in taken { e.deliver() }
    }
    var held: Int { lock.withLock { events.count } }
}

/// Records the rows a queued sink receives.
final class QueuedRecordingSink: QueuedTableSink, @unchecked Sendable {
    let queue: any TableEventQueue
    private let lock = NSLock()
    private var received: [[String?]] = []

    init(queue: any TableEventQueue) { self.queue = queue }

    func deliver(_ event: TableEvent) { deliver(event, shared: nil) }
    func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) {
        if case .update(_, let values, _) = event { lock.withLock { received.append(values) } }
    }
    var rows: [[String?]] { lock.withLock { received } }
}
