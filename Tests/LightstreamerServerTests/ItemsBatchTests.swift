import Foundation
import Testing

@testable import LightstreamerServer

/// A Data Adapter's batch of updates (`ItemEventListener.update(_:)`): the same events as
/// item by item, posted to each event loop's queue once per bounded locked section.
struct ItemsBatchTests {
    @Test func aBatchIsPostedOncePerQueue() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let queue = HoldingQueue()
        let sinks = (0..<3).map { _ in QueuedRecordingSink(queue: queue) }
        for sink in sinks { _ = try await engine.subscribe(spec(.merge, ["a", "b", "c"], ["n"]), sink: sink) }

        adapter.pushBatch(["a", "b", "c"].map { ItemUpdateEvent(item: $0, fields: ["n": "\($0)1"]) })
        #expect(queue.postSizes == [9])
        for item in ["a", "b", "c"] { adapter.push(item, ["n": "\(item)2"]) }
        #expect(queue.postSizes == [9, 3, 3, 3])

        queue.flush()
        for sink in sinks { #expect(sink.rows == [["a1"], ["b1"], ["c1"], ["a2"], ["b2"], ["c2"]]) }
        await engine.shutdown()
    }

    /// Sessions of two event loops, interleaved in subscription order: every event goes to
    /// its own sink's queue, item by item and in a batch (the engine compares the queue's
    /// identity per event and reads the queue only when it changes).
    @Test func eachEventGoesToItsSinksQueue() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let queues = [HoldingQueue(), HoldingQueue()]
        let sinks = (0..<6).map { QueuedRecordingSink(queue: queues[$0 % 2]) }
        for sink in sinks { _ = try await engine.subscribe(spec(.merge, ["a", "b"], ["n"]), sink: sink) }

        adapter.push("a", ["n": "a1"])
        adapter.pushBatch([ItemUpdateEvent(item: "a", fields: ["n": "a2"]), ItemUpdateEvent(item: "b", fields: ["n": "b1"])])
        for queue in queues {
            #expect(queue.postSizes == [3, 6])
            #expect(queue.heldSinks.allSatisfy { $0.queue === queue })
            queue.flush()
        }
        for sink in sinks { #expect(sink.rows == [["a1"], ["a2"], ["b1"]]) }
        await engine.shutdown()
    }

    /// The queue is handed the posted array as its only owner (`TableEventQueue.post(_:round:)`):
    /// when the producer kept a reference through the post, the loop that took it found it
    /// shared and copied every event to hand them over.
    @Test func aPostIsTheQueuesAlone() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let queue = OwnershipCheckingQueue()
        let sinks = (0..<4).map { _ in QueuedRecordingSink(queue: queue) }
        for sink in sinks { _ = try await engine.subscribe(spec(.merge, ["a", "b"], ["n"]), sink: sink) }

        adapter.push("a", ["n": "a1"])
        adapter.pushBatch([ItemUpdateEvent(item: "a", fields: ["n": "a2"]), ItemUpdateEvent(item: "b", fields: ["n": "b1"])])
        #expect(queue.posts == [4, 8])
        #expect(queue.owned == [true, true])
        await engine.shutdown()
    }

    /// A batch goes table by table in rounds of at most `eventsPerDrain` events, each round
    /// posted whenever `eventsPerPost` events wait, between two tables; every sink gets all of
    /// its events, in order.
    @Test func aLargeBatchIsPostedInBoundedRounds() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let queue = HoldingQueue()
        let tables = 50
        let sinks = (0..<tables).map { _ in QueuedRecordingSink(queue: queue) }
        for sink in sinks { _ = try await engine.subscribe(spec(.raw, ["a"], ["n"]), sink: sink) }

        // 2,000 updates × 50 subscriptions: 100,000 events, more than one round holds.
        let updates = 2_000
        adapter.pushBatch((0..<updates).map { ItemUpdateEvent(item: "a", fields: ["n": "\($0)"]) })
        let perRound = ItemEngine.eventsPerDrain / tables
        #expect(perRound < updates)
        // Each table's events of a round (as many as the round's updates) are never split.
        var expected: [Int] = []
        var expectedRounds: [Int] = []
        for (round, first) in stride(from: 0, to: updates, by: perRound).enumerated() {
            let perTable = min(perRound, updates - first)
            var waiting = 0
            for _ in 0..<tables {
                waiting += perTable
                if waiting >= ItemEngine.eventsPerPost {
                    expected.append(waiting)
                    expectedRounds.append(round)
                    waiting = 0
                }
            }
            if waiting > 0 {
                expected.append(waiting)
                expectedRounds.append(round)
            }
        }
        #expect(queue.postSizes == expected)
        // Posts of one round carry its id; the next round has its own.
        let rounds = queue.postRounds
        #expect(!rounds.contains(0))
        #expect(zip(rounds, rounds.dropFirst()).map { $0 != $1 } == zip(expectedRounds, expectedRounds.dropFirst()).map { $0 != $1 })
        queue.flush()
        for sink in sinks { #expect(sink.rows == (0..<updates).map { ["\($0)"] }) }
        await engine.shutdown()
    }

    /// A tick of many sessions posts as the round goes, each table's events whole in one post
    /// and in the batch's order: the loops may write a session as soon as its post arrives.
    @Test func aRoundPostsEachTableWholeAsItGoes() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let queue = HoldingQueue()
        let items = (0..<10).map { "i\($0)" }
        let sinks = (0..<300).map { _ in QueuedRecordingSink(queue: queue) }
        for (k, sink) in sinks.enumerated() {
            // Each subscription lists the items in its own order, starting at a different one.
            let mine = Array(items[(k % 10)...] + items[..<(k % 10)])
            _ = try await engine.subscribe(spec(.merge, mine, ["n"]), sink: sink)
        }
        queue.flush()

        adapter.pushBatch(items.map { ItemUpdateEvent(item: $0, fields: ["n": "\($0)"]) })
        let sizes = queue.postSizes
        #expect(sizes.reduce(0, +) == 3_000)
        #expect(sizes.count > 1, "posted before the round's end")
        #expect(sizes.dropLast().allSatisfy { $0 >= ItemEngine.eventsPerPost && $0 < ItemEngine.eventsPerPost + 10 })
        let rounds = Set(queue.postRounds)
        #expect(rounds.count == 1 && !rounds.contains(0))
        // No sink in two posts, and each sink's events together within its post.
        var seen = Set<ObjectIdentifier>()
        for post in queue.postSinks {
            var runs: [ObjectIdentifier] = []
            for sink in post where runs.last != sink { runs.append(sink) }
            #expect(Set(runs).count == runs.count)
            #expect(seen.isDisjoint(with: runs))
            seen.formUnion(runs)
        }
        #expect(seen.count == sinks.count)
        queue.flush()
        // In the batch's order, whatever the order of the subscription's items.
        for sink in sinks { #expect(sink.rows == items.map { [$0] }) }
        await engine.shutdown()
    }

    /// Frequency limits, buffers, selectors, snapshots and COMMAND keys behave the same
    /// whether the updates come one by one or in one batch.
    @Test func aBatchGivesTheSameEventsAsItemByItem() async throws {
        let updates: [ItemUpdateEvent] = [
            ItemUpdateEvent(item: "a", fields: ["n": "1", "key": "k1", "command": "ADD"], isSnapshot: true),
            ItemUpdateEvent(item: "b", fields: ["n": "1"]),
            ItemUpdateEvent(item: "a", fields: ["n": "2", "key": "k2", "command": "ADD"]),
            ItemUpdateEvent(item: "b", fields: ["n": "7"]),
            ItemUpdateEvent(item: "a", fields: ["n": "3", "key": "k1", "command": "UPDATE"]),
            ItemUpdateEvent(item: "b", fields: ["n": "3"]),
            ItemUpdateEvent(item: "a", fields: ["n": "9", "key": "k2", "command": "DELETE"]),
        ]
        let specs = [
            spec(.merge, ["a", "b"], ["n"], snapshot: .yes),
            spec(.merge, ["a", "b"], ["n"], frequency: .limited(1)),
            spec(.distinct, ["b"], ["n"], snapshot: .length(2)),
            spec(.raw, ["a", "b"], ["n"], selector: "n!=7"),
            spec(.command, ["a"], ["key", "command", "n"], snapshot: .yes),
        ]
        func run(batched: Bool) async throws -> [[TableEvent]] {
            let adapter = ScriptedDataAdapter()
            let clock = ManualEngineClock()
            let engine = makeEngine(adapter, clock: clock)
            var sinks: [RecordingSink] = []
            for s in specs {
                let sink = RecordingSink()
                _ = try await engine.subscribe(s, sink: sink)
                sinks.append(sink)
            }
            adapter.deliver(updates, batched: batched)
            clock.advance(by: .seconds(5))
            let events = sinks.map(\.events)
            await engine.shutdown()
            return events
        }
        let itemByItem = try await run(batched: false)
        let batched = try await run(batched: true)
        #expect(itemByItem.allSatisfy { !$0.isEmpty })
        #expect(batched == itemByItem)
    }
}

extension ItemsBatchTests {
    /// An engine on `adapter` whose clock can run an action between two locked sections, with
    /// 50 MERGE subscriptions (fields `n`, `m`) to item `a` through one queue, flushed.
    static func fiftySubscriptionsToA(
        _ adapter: ScriptedDataAdapter, snapshot: SnapshotRequest
    ) async throws -> (ItemEngine, HookedClock, HoldingQueue, [QueuedRecordingSink]) {
        let clock = HookedClock()
        let engine = ItemEngine(
            adapterSets: [AdapterSet(name: "SET", metadata: LiteralBasedMetadataAdapter(), dataAdapters: ["DEFAULT": adapter])],
            clock: clock)
        let queue = HoldingQueue()
        let sinks = (0..<50).map { _ in QueuedRecordingSink(queue: queue) }
        for sink in sinks { _ = try await engine.subscribe(spec(.merge, ["a"], ["n", "m"], snapshot: snapshot), sink: sink) }
        queue.flush()
        return (engine, clock, queue, sinks)
    }

    /// Item by item (an item still in its snapshot), a batch holds its events until it posts
    /// them; an update from elsewhere that comes between two of its locked sections must not
    /// overtake the ones held (it waits in the table's outbox and goes out after them, with
    /// the batch's later events behind it).
    @Test func anEventFromElsewhereWaitsBehindTheBatchsHeldEvents() async throws {
        let adapter = ScriptedDataAdapter(snapshotItems: ["a"])
        let (engine, clock, queue, sinks) = try await Self.fiftySubscriptionsToA(adapter, snapshot: .yes)

        // The batch's second locked section reads the clock first: the update from elsewhere
        // comes then, on this thread, outside the engine's lock.
        clock.hook(onCall: 2) { adapter.push("a", ["m": "x"], snapshot: true) }
        adapter.pushBatch((0..<400).map { ItemUpdateEvent(item: "a", fields: ["n": "\($0)"], isSnapshot: true) })
        #expect(clock.hookRan)

        let perSection = (ItemEngine.eventsPerSection + 49) / 50
        let expected: [[String?]] =
            (0..<perSection).map { ["\($0)", nil] } + [["\(perSection - 1)", "x"]]
            + (perSection..<400).map { ["\($0)", "x"] }
        queue.flush()
        for sink in sinks { #expect(sink.rows == expected) }
        #expect(queue.postSizes.reduce(0, +) == 401 * 50)
        await engine.shutdown()
    }

    /// Table by table, a round applies and fans out in one locked section: an update from
    /// elsewhere comes between two rounds, after the first round's events and before the
    /// second's.
    @Test func anEventFromElsewhereComesBetweenTwoRounds() async throws {
        let adapter = ScriptedDataAdapter()
        let (engine, clock, queue, sinks) = try await Self.fiftySubscriptionsToA(adapter, snapshot: .no)

        clock.hook(onCall: 2) { adapter.push("a", ["m": "x"]) }
        let updates = 2_000
        adapter.pushBatch((0..<updates).map { ItemUpdateEvent(item: "a", fields: ["n": "\($0)"]) })
        #expect(clock.hookRan)

        let perRound = ItemEngine.eventsPerDrain / 50
        let expected: [[String?]] =
            (0..<perRound).map { ["\($0)", nil] } + [["\(perRound - 1)", "x"]]
            + (perRound..<updates).map { ["\($0)", "x"] }
        queue.flush()
        for sink in sinks { #expect(sink.rows == expected) }
        await engine.shutdown()
    }

    /// Updates of an item still in its snapshot go item by item between table-major rounds:
    /// what each subscription receives is what the same updates give one by one.
    @Test func snapshotsAmongLiveUpdatesGiveTheSameEventsAsItemByItem() async throws {
        let updates: [ItemUpdateEvent] = [
            ItemUpdateEvent(item: "a", fields: ["n": "1"]),
            ItemUpdateEvent(item: "s", fields: ["n": "1"], isSnapshot: true),
            ItemUpdateEvent(item: "b", fields: ["n": "1"]),
            ItemUpdateEvent(item: "s", fields: ["n": "2"], isSnapshot: true),
            ItemUpdateEvent(item: "a", fields: ["n": "2"]),
            ItemUpdateEvent(item: "s", fields: ["n": "3"]),
            ItemUpdateEvent(item: "b", fields: ["n": "2"]),
            ItemUpdateEvent(item: "s", fields: ["n": "4"]),
        ]
        let specs = [
            spec(.merge, ["a", "s", "b"], ["n"], snapshot: .yes),
            spec(.merge, ["s", "a"], ["n"]),
            spec(.distinct, ["s", "b"], ["n"], snapshot: .length(3)),
            spec(.raw, ["a", "s"], ["n"]),
        ]
        func run(batched: Bool) async throws -> [[[String?]]] {
            let adapter = ScriptedDataAdapter(snapshotItems: ["s"])
            let engine = makeEngine(adapter)
            let queue = HoldingQueue()
            var sinks: [QueuedRecordingSink] = []
            for s in specs {
                let sink = QueuedRecordingSink(queue: queue)
                _ = try await engine.subscribe(s, sink: sink)
                sinks.append(sink)
            }
            adapter.deliver(updates, batched: batched)
            queue.flush()
            let rows = sinks.map(\.rows)
            await engine.shutdown()
            return rows
        }
        let itemByItem = try await run(batched: false)
        let batched = try await run(batched: true)
        #expect(itemByItem.allSatisfy { $0.count >= 3 })
        #expect(batched == itemByItem)
    }
}

/// A `ManualEngineClock` that runs an action once, just before it answers its Nth `now()`
/// after `hook(onCall:_:)` (outside any lock of the engine, which reads the clock before it
/// locks).
final class HookedClock: EngineClock, @unchecked Sendable {
    private let base = ManualEngineClock()
    private let lock = NSLock()
    private var remaining = 0
    private var action: (@Sendable () -> Void)?
    private var ran = false

    func hook(onCall n: Int, _ action: @escaping @Sendable () -> Void) {
        lock.withLock {
            remaining = n
            self.action = action
        }
    }

    var hookRan: Bool { lock.withLock { ran } }

    func now() -> UInt64 {
        let due = lock.withLock { () -> (@Sendable () -> Void)? in
            guard action != nil else { return nil }
            remaining -= 1
            guard remaining == 0 else { return nil }
            defer {
                action = nil
                ran = true
            }
            return action
        }
        due?()
        return base.now()
    }

    func schedule(at deadline: UInt64, _ action: @escaping @Sendable () -> Void) -> any EngineTimer {
        base.schedule(at: deadline, action)
    }
}

/// `QueuedPosts`: room planned per queue before a drain round's events are grouped.
@Suite struct QueuedPostsTests {
    @Test func plannedGroupsPostTheirEventsInOrderAndEmptyOnesNothing() {
        let first = HoldingQueue()
        let second = HoldingQueue()
        let unused = HoldingQueue()
        let sinkA = QueuedRecordingSink(queue: first)
        let sinkB = QueuedRecordingSink(queue: second)
        var posts = QueuedPosts()
        posts.plan(3, for: first)
        posts.plan(2, for: unused)
        posts.plan(1, for: second)
        posts.plan(2, for: first)
        posts.reservePlanned()
        for i in 0..<5 {
            posts.append(
                QueuedTableEvent(sink: sinkA, event: .update(item: 1, values: ["a\(i)"], isSnapshot: false), shared: nil), to: first)
            if i == 2 {
                posts.append(
                    QueuedTableEvent(sink: sinkB, event: .update(item: 1, values: ["b"], isSnapshot: false), shared: nil), to: second)
            }
        }
        #expect(posts.post().isEmpty)
        #expect(first.postSizes == [5])
        #expect(second.postSizes == [1])
        // Planned for, but given no event: no post at all.
        #expect(unused.postSizes == [])
        first.flush()
        second.flush()
        #expect(sinkA.rows == (0..<5).map { ["a\($0)"] })
        #expect(sinkB.rows == [["b"]])
        // The next round starts empty.
        #expect(posts.post().isEmpty)
        #expect(first.postSizes == [5])
    }

    /// A batch's events, posted with their table's slot, go out grouped by table, each
    /// table's in the order appended; without slots, in the order appended.
    @Test func eventsWithSlotsArePostedGroupedByTable() {
        final class Order: @unchecked Sendable {
            var seen: [String] = []
        }
        let queue = HoldingQueue()
        let order = Order()
        final class NamedSink: QueuedTableSink, @unchecked Sendable {
            let queue: any TableEventQueue
            let name: String
            let order: Order
            init(queue: any TableEventQueue, name: String, order: Order) {
                self.queue = queue
                self.name = name
                self.order = order
            }
            func deliver(_ event: TableEvent) { deliver(event, shared: nil) }
            func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) {
                if case .update(_, let values, _) = event { order.seen.append("\(name)\(values[0] ?? "")") }
            }
        }
        let sinks = ["a", "b", "c"].map { NamedSink(queue: queue, name: $0, order: order) }
        var posts = QueuedPosts()
        // Item by item: a1 b1 c1 a2 c2 b2 a3; slots in the order the tables were claimed.
        let script: [(sink: Int, value: String)] = [(0, "1"), (1, "1"), (2, "1"), (0, "2"), (2, "2"), (1, "2"), (0, "3")]
        for (k, v) in script {
            posts.append(
                QueuedTableEvent(sink: sinks[k], event: .update(item: 1, values: [v], isSnapshot: false), shared: nil),
                to: queue, slot: UInt32(k))
        }
        #expect(posts.post().isEmpty)
        queue.flush()
        #expect(order.seen == ["a1", "a2", "a3", "b1", "b2", "c1", "c2"])

        order.seen = []
        for (k, v) in script {
            posts.append(QueuedTableEvent(sink: sinks[k], event: .update(item: 1, values: [v], isSnapshot: false), shared: nil), to: queue)
        }
        #expect(posts.post().isEmpty)
        queue.flush()
        #expect(order.seen == ["a1", "b1", "c1", "a2", "c2", "b2", "a3"])
    }

    @Test func groupsStartWithTheHintedCapacityAndTheLargestPostIsKept() {
        let first = HoldingQueue()
        let second = HoldingQueue()
        let sinkA = QueuedRecordingSink(queue: first)
        let sinkB = QueuedRecordingSink(queue: second)
        var posts = QueuedPosts()
        posts.reserveHint = 4
        for i in 0..<6 {
            posts.append(
                QueuedTableEvent(sink: sinkA, event: .update(item: 1, values: ["a\(i)"], isSnapshot: false), shared: nil), to: first)
        }
        posts.append(QueuedTableEvent(sink: sinkB, event: .update(item: 1, values: ["b"], isSnapshot: false), shared: nil), to: second)
        #expect(posts.post().isEmpty)
        #expect(posts.largestPosted == 6)
        #expect(first.postSizes == [6])
        #expect(second.postSizes == [1])
        first.flush()
        #expect(sinkA.rows == (0..<6).map { ["a\($0)"] })
    }
}

extension QueuedPostsTests {
    /// The table path (`append(_:of:slot:)`) continues a run only after an event of the same
    /// sink: an event appended in between through `append(_:to:)`, for another sink, makes the
    /// next table event start a run of its own (a continuation there would go to the other sink).
    @Test func aTableEventAfterAnotherSinksEventStartsItsOwnRun() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let queue = HoldingQueue()
        let sinkA = QueuedRecordingSink(queue: queue)
        let sinkB = QueuedRecordingSink(queue: queue)
        let handle = try await engine.subscribe(spec(.merge, ["i1"], ["f"]), sink: sinkA)
        let found = engine.store.withLockedValue { $0.tables[handle.id] }
        let table = try #require(found)
        var posts = QueuedPosts()
        posts.append(.event(update(1, ["a1"]), nil), of: table, slot: nil)
        posts.append(.event(update(1, ["a2"]), nil), of: table, slot: nil)
        posts.append(QueuedTableEvent(sink: sinkB, event: update(1, ["b1"]), shared: nil), to: queue)
        posts.append(.event(update(1, ["a3"]), nil), of: table, slot: nil)
        #expect(posts.post().isEmpty)
        #expect(queue.postSinks == [[ObjectIdentifier(sinkA), ObjectIdentifier(sinkA), ObjectIdentifier(sinkB), ObjectIdentifier(sinkA)]])
        queue.flush()
        #expect(sinkA.rows == [["a1"], ["a2"], ["a3"]])
        #expect(sinkB.rows == [["b1"]])
    }
}

/// Records, for each post, its size and whether the array it took was its own: making a shared
/// array's storage unique copies it to a new buffer.
final class OwnershipCheckingQueue: TableEventQueue, @unchecked Sendable {
    private let lock = NSLock()
    private var _posts: [Int] = []
    private var _owned: [Bool] = []

    func post(_ events: inout [QueuedTableEvent], round: UInt64) -> Bool {
        var taken: [QueuedTableEvent] = []
        swap(&taken, &events)
        let before = taken.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        let after = taken.withUnsafeMutableBufferPointer { UInt(bitPattern: $0.baseAddress) }
        lock.withLock {
            _posts.append(taken.count)
            _owned.append(before == after)
        }
        return false
    }
    func flush() {}
    var posts: [Int] { lock.withLock { _posts } }
    var owned: [Bool] { lock.withLock { _owned } }
}
