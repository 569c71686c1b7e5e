import Foundation
import NIOConcurrencyHelpers
import TLCP
import Testing

@testable import LightstreamerServer

/// Sessions that share an update's encoding (`SharedUpdateEncoding`) must write exactly the
/// bytes a session encoding every update by itself writes. Many sessions with mixed shapes
/// (field lists, modes, frequency limits, diff formats, late starts) receive the same engine
/// events; each one's lines are compared with a reference machine fed the same events without
/// the shared encodings.
@Suite struct SharedEncodingTests {
    /// Records what the engine delivers, with the shared encoding of each update.
    class SharingSink: SharedEncodingTableSink, @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [(TableEvent, SharedUpdateEncoding?)] = []

        func deliver(_ event: TableEvent) { lock.withLock { entries.append((event, nil)) } }
        func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) { lock.withLock { entries.append((event, shared)) } }

        func take() -> [(TableEvent, SharedUpdateEncoding?)] {
            lock.withLock {
                defer { entries.removeAll() }
                return entries
            }
        }
    }

    /// The same, fed through a loop's queue (`PostedQueue`), as the server's sessions are. It
    /// keeps the runs the queue hands over as they came (`QueuedTableEvent`), so that the
    /// machine takes them as a session's loop does (`tableEvents(subscriptionId:run:…)`, where
    /// an update that shares its row with the encoding arrives as `EngineEvent.shared`).
    final class QueuedSharingSink: SharingSink, QueuedTableSink, @unchecked Sendable {
        let queue: any TableEventQueue
        private let runLock = NSLock()
        private var runs: [QueuedTableEvent] = []
        init(queue: any TableEventQueue) { self.queue = queue }

        func deliver(run: inout [QueuedTableEvent], handleNow: Bool) {
            runLock.withLock { runs.append(contentsOf: run) }
            run.removeAll(keepingCapacity: true)
        }

        func takeRuns() -> [QueuedTableEvent] {
            runLock.withLock {
                defer { runs.removeAll() }
                return runs
            }
        }
    }

    /// A loop's mailbox that hands its posts over when flushed, as `DeliveryPump` does
    /// (`PostedEvents.handOver`: consecutive events of a sink go to it as one run).
    final class PostedQueue: TableEventQueue, @unchecked Sendable {
        private let lock = NSLock()
        private var mailbox = PostedEvents()
        func post(_ events: inout [QueuedTableEvent], round: UInt64) -> Bool {
            lock.withLock { mailbox.append(moving: &events, round: round) }
            return false
        }
        func flush() {
            var taken = lock.withLock {
                defer { mailbox = PostedEvents() }
                return mailbox
            }
            taken.handOver()
        }
    }

    /// One client: a machine that uses shared encodings and a reference one that does not.
    struct Client {
        let name: String
        let sink: SharingSink
        var sharing: SessionScript
        var reference: SessionScript
        let fieldCount: Int
        let itemCount: Int
        /// Whether its updates fold in an inbox (MERGE, as `ServerSession` marks them).
        let mergeable: Bool
        /// Updates its inbox folded into a later one (`feed(batched:throughInbox:)`).
        var foldedUpdates = 0

        init(
            name: String, diffs: [DiffFormat]?, itemCount: Int, fieldCount: Int, mode: SubscriptionMode,
            queue: (any TableEventQueue)? = nil
        ) {
            self.name = name
            sink = queue.map { QueuedSharingSink(queue: $0) } ?? SharingSink()
            self.itemCount = itemCount
            self.fieldCount = fieldCount
            mergeable = mode == .merge
            let create = CreateSessionRequest(supportedDiffs: diffs)
            sharing = SessionScript(create: create)
            reference = SessionScript(create: create)
            for script in [\Client.sharing, \Client.reference] {
                self[keyPath: script].subscribe(1, mode: mode, items: itemCount, fields: fieldCount)
                _ = self[keyPath: script].take()
            }
        }

        /// Feeds what the engine delivered, to the sharing machine one event at a time or, with
        /// `batched`, as one batch: the run the queue handed over, as a session's loop takes it
        /// when its inbox is empty, or with `throughInbox` the run moved into a `SessionInbox`
        /// and taken back out, as a session that is behind gets it (each MERGE item's updates
        /// folded into the latest: both machines get what the inbox gives). The reference gets
        /// them one event at a time. Returns (updates that could use the shared encoding, updates that
        /// carried one, updates that came as the encoding alone), judged on the reference's
        /// rows, which the sharing machine's must equal.
        mutating func feed(
            batched: Bool = false, throughInbox: Bool = false
        ) -> (
            hits: Int, offered: Int, sharedPayloads: Int
        ) {
            var hits = 0
            var offered = 0
            var sharedPayloads = 0
            var run: [QueuedTableEvent] = []
            var entries = sink.take()
            var folded: [SessionInbox.Entry] = []
            if let queued = sink as? QueuedSharingSink {
                run = queued.takeRuns()
                sharedPayloads = run.filter { if case .shared = $0.payload { true } else { false } }.count
                if batched && throughInbox {
                    var inbox = SessionInbox()
                    for queued in run { _ = queued.move(into: &inbox, subscriptionId: 1, mergeable: mergeable) }
                    folded = inbox.take()
                    foldedUpdates += inbox.takeConflatedCount()
                    entries += folded.map { $0.event.split() }
                } else {
                    entries += run.map { ($0.event, $0.shared) }
                }
            }
            for (event, shared) in entries {
                if case .update(let item, let values, _) = event, let shared {
                    offered += 1
                    let previous = (reference.machine.tables[1]?.rows[item - 1] ?? nil)?.values
                    if shared.encodedValues(previous: previous, values: values, diffs: reference.machine.diffs) != nil { hits += 1 }
                }
                if !batched {
                    sharing.record(sharing.machine.tableEvents([(subscriptionId: 1, event: .event(event, shared))], now: sharing.now))
                }
                reference.record(reference.machine.tableEvents([(subscriptionId: 1, event: event)], now: reference.now))
            }
            if batched && throughInbox {
                sharing.record(sharing.machine.tableEvents(folded, now: sharing.now))
            } else if batched {
                // The events the queue handed over, as a session's loop takes them.
                var lost = 0
                sharing.record(Array(sharing.machine.tableEvents(subscriptionId: 1, run: &run, lost: &lost, now: sharing.now)))
            }
            return (hits, offered, sharedPayloads)
        }
    }

    /// How the sessions of `sharedEncodingsNeverChangeWhatASessionReceives` take their events.
    enum Feed: CaseIterable, Sendable {
        /// Item by item, each event fed on its own.
        case itemByItem
        /// The adapter's updates in batches (`ItemEventListener.update(_:)`), through a loop's
        /// queue, each client's events fed as one batch (the engine's direct posts grouped by
        /// table, runs, the session's batch).
        case batched
        /// The same, each client's run going through a `SessionInbox` first (a session behind).
        case batchedThroughInbox
    }

    @Test(arguments: Feed.allCases)
    func sharedEncodingsNeverChangeWhatASessionReceives(feed: Feed) async throws {
        let batched = feed != .itemByItem
        let throughInbox = feed == .batchedThroughInbox
        let adapter = ScriptedDataAdapter(snapshotItems: ["a", "b"])
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        let queue = PostedQueue()
        var held: [ItemUpdateEvent] = []
        func push(_ item: String, _ fields: [String: String?]) {
            if batched { held.append(ItemUpdateEvent(item: item, fields: fields)) } else { adapter.push(item, fields) }
        }
        func release() {
            if !held.isEmpty { adapter.pushBatch(held) }
            held = []
            queue.flush()
        }

        struct Shape {
            var mode: SubscriptionMode
            var items: [String]
            var fields: [String]
            var frequency: RequestedFrequency = .unlimited
            var snapshot: SnapshotRequest = .no
        }
        let shapes = [
            Shape(mode: .merge, items: ["a", "b"], fields: ["x", "y"], snapshot: .yes),
            Shape(mode: .merge, items: ["a", "b"], fields: ["x", "y"]),
            Shape(mode: .merge, items: ["a"], fields: ["y", "x", "z"]),
            Shape(mode: .merge, items: ["a", "b"], fields: ["x", "y"], frequency: .limited(2)),
            Shape(mode: .distinct, items: ["a"], fields: ["x", "y"]),
            Shape(mode: .raw, items: ["b", "a"], fields: ["x"]),
        ]
        var clients: [Client] = []
        func join(_ index: Int) async throws {
            let shape = shapes[index % shapes.count]
            // Every third client accepts no diff format: its encodings differ from the others'.
            let diffs: [DiffFormat]? = index % 3 == 2 ? [] : nil
            let client = Client(
                name: "client \(index) (\(shape.mode), \(shape.fields), \(shape.frequency))", diffs: diffs,
                itemCount: shape.items.count, fieldCount: shape.fields.count, mode: shape.mode,
                queue: batched ? queue : nil)
            _ = try await engine.subscribe(
                spec(
                    shape.mode, shape.items, shape.fields, snapshot: shape.snapshot,
                    frequency: shape.frequency), sink: client.sink)
            clients.append(client)
        }
        for i in 0..<18 { try await join(i) }
        adapter.push("a", ["x": "snap-x", "y": "snap-y", "z": "z0"], snapshot: true)
        adapter.endOfSnapshot("a")
        adapter.endOfSnapshot("b")

        var hits = 0
        var offered = 0
        var sharedPayloads = 0
        // Values with long common parts (diff formats pay off), repeats, nulls and empties.
        let prefix = String(repeating: "quote-", count: 8)
        for step in 1...60 {
            var fields: [String: String?] = ["x": "\(prefix)\(step % 7)"]
            if step % 4 == 0 {
                fields["y"] = nil as String?
            } else if step % 5 == 0 {
                fields["y"] = ""
            } else {
                fields["y"] = "y\(step / 3)"
            }
            if step % 6 == 0 { fields["z"] = "z\(step)" }
            push(step % 3 == 0 ? "b" : "a", fields)
            // Batched: five updates per batch.
            if step % 5 == 0 { release() }
            if step % 10 == 0 { clock.advance(by: .ms(300)) }
            // Late joiners start from whatever the items hold by then.
            if step == 20 || step == 40 { for i in clients.count..<(clients.count + 6) { try await join(i) } }
            for i in clients.indices {
                let (h, o, p) = clients[i].feed(batched: batched, throughInbox: throughInbox)
                hits += h
                offered += o
                sharedPayloads += p
            }
        }
        release()
        clock.advance(by: .ms(2_000))
        queue.flush()
        for i in clients.indices { _ = clients[i].feed(batched: batched, throughInbox: throughInbox) }

        for i in clients.indices {
            let got = clients[i].sharing.take()
            let expected = clients[i].reference.take()
            #expect(!expected.isEmpty, "\(clients[i].name) received nothing")
            #expect(got == expected, "\(clients[i].name)")
        }
        // Through an inbox, MERGE updates folded (and the sessions then encoded against rows
        // other than the ones the shared encodings were made for).
        let folds = clients.reduce(0) { $0 + $1.foldedUpdates }
        #expect(throughInbox ? folds > 0 : folds == 0, "\(folds) updates folded")
        // Both paths ran: most updates reused another session's bytes, and the sessions whose
        // history or diff formats differ encoded by themselves.
        #expect(hits > offered / 2, "\(hits) of \(offered)")
        #expect(hits < offered, "\(hits) of \(offered)")
        // Batched, most updates reached the sessions as the encoding alone.
        if batched { #expect(sharedPayloads > offered / 2, "\(sharedPayloads) of \(offered)") }
    }

    /// The bytes are read in place (`encodedBytes(mask:)`), from an encoding the object holds
    /// by a raw pointer: it is freed with the object, and a racing loser's with the race.
    @Test func theEncodedBytesLiveAsLongAsTheirEncoding() {
        weak var published: AnyObject?
        do {
            let encoding = SharedUpdateEncoding(previous: ["a", "b"], values: ["a", "c"])
            #expect(encoding.publishedEncoding == nil)
            let bytes = encoding.encodedBytes(mask: 0).map { Array($0) }
            #expect(bytes == Array("|c".utf8))
            // Another session with other formats: none for it, and the first stays.
            #expect(encoding.encodedBytes(mask: 2) == nil)
            published = encoding.publishedEncoding
            #expect(published != nil)
            #expect(encoding.encodedBytes(mask: 0).map { Array($0) } == bytes)
        }
        #expect(published == nil)
        for _ in 0..<100 {
            weak var winner: AnyObject?
            do {
                let encoding = SharedUpdateEncoding(previous: nil, values: ["x"])
                DispatchQueue.concurrentPerform(iterations: 4) { _ in _ = encoding.encodedBytes(mask: 0) }
                winner = encoding.publishedEncoding
                #expect(winner != nil)
            }
            #expect(winner == nil)
        }
    }

    /// The first encoding is kept without a lock: sessions on several loops read it at once.
    /// Racing first readers with other diff formats may each encode, one wins, and a session
    /// only ever gets bytes made for its own formats.
    @Test func racingSessionsGetTheirOwnFormatsBytesOrNone() {
        // A large JSON value with a small change: the patch is shorter than the value.
        let long = String(repeating: "lorem ipsum ", count: 30)
        let previous: [String?] = ["{\"a\":1,\"b\":\"\(long)\"}", "x"]
        let values: [String?] = ["{\"a\":2,\"b\":\"\(long)\"}", "x"]
        let plain = UpdateNotification.encodedValues(UpdateCodec.encode(previous: previous, current: values, diffs: []))
        let patched = UpdateNotification.encodedValues(UpdateCodec.encode(previous: previous, current: values, diffs: [.jsonPatch]))
        #expect(plain != patched, "the two formats must encode differently for this test to mean anything")
        for _ in 0..<200 {
            let encoding = SharedUpdateEncoding(previous: previous, values: values)
            let results = NIOLockedValueBox<[(Bool, [UInt8]?)]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { i in
                let withPatch = i % 2 == 1
                let bytes = encoding.encodedValues(previous: previous, values: values, diffs: withPatch ? [.jsonPatch] : [])
                results.withLockedValue { $0.append((withPatch, bytes)) }
            }
            let all = results.withLockedValue { $0 }
            for (withPatch, bytes) in all where bytes != nil {
                #expect(bytes == (withPatch ? patched : plain))
            }
            // Whoever won, every session with the winner's formats got the bytes.
            let served = Set(all.filter { $0.1 != nil }.map(\.0))
            #expect(served.count == 1)
        }
    }

    @Test func anEncodingAppliesOnlyToTheRowsItWasMadeFor() {
        let encoding = SharedUpdateEncoding(previous: ["1", "a"], values: ["2", "a"])
        let previous: [String?] = ["1", "a"]
        let values: [String?] = ["2", "a"]
        let expected = UpdateNotification.encodedValues(UpdateCodec.encode(previous: previous, current: values))
        #expect(encoding.encodedValues(previous: previous, values: values, diffs: []) == expected)
        // Another previous row, other values, or other diff formats: not this encoding.
        #expect(encoding.encodedValues(previous: ["0", "a"], values: values, diffs: []) == nil)
        #expect(encoding.encodedValues(previous: nil, values: values, diffs: []) == nil)
        #expect(encoding.encodedValues(previous: previous, values: ["2", "b"], diffs: []) == nil)
        #expect(encoding.encodedValues(previous: previous, values: values, diffs: [.tlcpDiff]) == nil)
        #expect(encoding.encodedValues(previous: previous, values: values, diffs: []) == expected)
    }

    /// A session keeps a row it shared as the encoding that brought it (`SentRow.shared`) and
    /// matches the next update by where the row's values are; rows equal in other buffers
    /// match by their values, and nothing else matches.
    @Test func aRowKeptAsItsEncodingAppliesByItsValues() {
        let first = SharedUpdateEncoding(previous: nil, values: ["1", "a"])
        let next = SharedUpdateEncoding(previous: first.values, values: ["2", "a"])
        #expect(next.applies(previous: .shared(first)))
        var copy: [String?] = ["1"]
        copy.append("a")
        let equal = SharedUpdateEncoding(previous: nil, values: copy)
        #expect(next.applies(previous: .shared(equal)))
        #expect(next.applies(previous: .values(copy)))
        #expect(!next.applies(previous: .shared(SharedUpdateEncoding(previous: nil, values: ["0", "a"]))))
        #expect(!next.applies(previous: .shared(next)))
        #expect(!next.applies(previous: .values(["1", nil])))
        #expect(!next.applies(previous: nil))
        // The first update of an item applies only to a session that sent nothing for it.
        let opening = SharedUpdateEncoding(previous: nil, values: ["1", "a"])
        #expect(opening.applies(previous: nil))
        #expect(!opening.applies(previous: .shared(first)))
        #expect(!opening.applies(previous: .values(["1", "a"])))
    }

    /// Sessions keep only the mask of their diff formats and read the set back from one
    /// shared copy per mask: it must equal what the session asked for, whichever it is.
    @Test func diffSetsReadBackFromTheMaskEqualWhatWasAsked() {
        let all: [Set<DiffFormat>] = [[], [.jsonPatch], [.tlcpDiff], [.jsonPatch, .tlcpDiff]]
        for formats in all {
            #expect(SessionStateMachine.diffSet(mask: SharedUpdateEncoding.mask(formats)) == formats)
        }
    }
}
