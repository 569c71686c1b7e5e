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

    /// One item at several positions of a subscription, two of them beyond the 64 positions
    /// whose flags the subscription keeps inline (`PositionSet`): each waits for the adapter's
    /// snapshot, gets it, then the live events, in the order of its positions.
    @Test func anItemAtSeveralPositionsBeyondTheFirst64() async throws {
        let adapter = ScriptedDataAdapter(snapshotItems: ["s"])
        let engine = makeEngine(adapter)
        var names = (0..<70).map { "i\($0)" }
        for position in [0, 65, 69] { names[position] = "s" }
        let distinct = RecordingSink()
        let merge = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, names, ["v"], snapshot: .yes), sink: distinct)
        _ = try await engine.subscribe(spec(.merge, names, ["v"], snapshot: .yes), sink: merge)
        // The other items have no adapter snapshot: served (empty) at once.
        let others = (1...70).filter { ![1, 66, 70].contains($0) }
        #expect(distinct.take() == others.map { .endOfSnapshot(item: $0) })
        #expect(merge.take().isEmpty)

        adapter.push("s", ["v": "snap"], snapshot: true)
        #expect(distinct.take().isEmpty)
        #expect(merge.take() == [1, 66, 70].map { update($0, ["snap"], snapshot: true) })
        adapter.endOfSnapshot("s")
        #expect(distinct.take() == [1, 66, 70].flatMap { [update($0, ["snap"], snapshot: true), .endOfSnapshot(item: $0)] })

        adapter.push("s", ["v": "live"])
        #expect(distinct.take() == [1, 66, 70].map { update($0, ["live"]) })
        #expect(merge.take() == [1, 66, 70].map { update($0, ["live"]) })
        adapter.push("i64", ["v": "x"])
        #expect(distinct.take() == [update(65, ["x"])])
        // MERGE: no row existed when subscribed, so the first one is flagged as the snapshot.
        #expect(merge.take() == [update(65, ["x"], snapshot: true)])
        adapter.push("i64", ["v": "y"])
        #expect(merge.take() == [update(65, ["y"])])
    }

    /// Subscriptions leave an item's list of subscribers from the middle, the front and the
    /// end (the last entry moves into the hole): every remaining one still gets each update,
    /// exactly once, and the ones that left get nothing.
    @Test func subscribersLeaveFromAnywhereInTheList() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        var sinks: [RecordingSink] = []
        var handles: [TableHandle] = []
        for _ in 0..<6 {
            let sink = RecordingSink()
            handles.append(try await engine.subscribe(spec(.raw, ["a", "b", "a"], ["v"]), sink: sink))
            sinks.append(sink)
        }
        var remaining = Set(0..<6)
        for leaving in [2, 0, 5] {
            await engine.unsubscribe(handles[leaving])
            remaining.remove(leaving)
            for sink in sinks { _ = sink.take() }
            adapter.push("a", ["v": "after \(leaving)"])
            for (i, sink) in sinks.enumerated() {
                #expect(sink.take() == (remaining.contains(i) ? [update(1, ["after \(leaving)"]), update(3, ["after \(leaving)"])] : []))
            }
        }
        let late = RecordingSink()
        _ = try await engine.subscribe(spec(.raw, ["a"], ["v"]), sink: late)
        adapter.push("a", ["v": "last"])
        #expect(late.take() == [update(1, ["last"])])
        for i in remaining { #expect(sinks[i].take() == [update(1, ["last"]), update(3, ["last"])]) }
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
        adapter.push("a", ["n": "1"])
        adapter.push("a", ["n": "2"])
        adapter.push("a", ["n": "3"])
        #expect(sink.events.count == 1)
        // The wait is long: the test's own task can stall for seconds on a loaded machine (a CI
        // run: 15 s), while the engine's timer runs on an event loop. What is checked is when
        // the engine delivered, as the sink saw it, not when this task looked.
        let deadline = ContinuousClock.now + .seconds(30)
        while sink.events.count < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let arrivals = sink.arrivals
        #expect(sink.takeRows() == [["1"], ["3"]])
        try #require(arrivals.count == 2)
        // 20 per second: the held update goes out 50 ms after the first, not at once, not late.
        let spacing = arrivals[1] - arrivals[0]
        #expect(spacing >= .milliseconds(40) && spacing < .seconds(2), "\(spacing)")
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
    private var _postRounds: [UInt64] = []
    private var _postSinks: [[ObjectIdentifier]] = []

    func post(_ events: inout [QueuedTableEvent], round: UInt64) -> Bool {
        lock.withLock {
            self.events += events
            _postSizes.append(events.count)
            _postRounds.append(round)
            _postSinks.append(events.resolvedSinks.compactMap { $0.map { ObjectIdentifier($0) } })
            events = []
        }
        return false
    }
    /// The number of events of each `post` so far.
    var postSizes: [Int] { lock.withLock { _postSizes } }
    /// The round of each `post` so far (0: none).
    var postRounds: [UInt64] { lock.withLock { _postRounds } }
    /// The sink of each event of each `post` so far.
    var postSinks: [[ObjectIdentifier]] { lock.withLock { _postSinks } }
    func flush() {
        let taken = lock.withLock {
            defer { events = [] }
            return events
        }
        for (e, sink) in zip(taken, taken.resolvedSinks) {
            guard let sink else {
                Issue.record("an event continues a run that no event before it started")
                continue
            }
            e.deliver(continuing: sink)
        }
    }
    var held: Int { lock.withLock { events.count } }
    /// The sink of each event held.
    var heldSinks: [any QueuedTableSink] { lock.withLock { events.resolvedSinks.compactMap { $0 } } }
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

extension Array where Element == QueuedTableEvent {
    /// The sink of each event, a run's later events taking the sink of its first (nil where a
    /// run has no first event before it, which a post never has).
    var resolvedSinks: [(any QueuedTableSink)?] {
        var current: (any QueuedTableSink)?
        return map { event in
            if let sink = event.sink { current = sink }
            return current
        }
    }
}
