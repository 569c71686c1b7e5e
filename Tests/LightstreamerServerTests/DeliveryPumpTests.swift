import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import LightstreamerServer

extension TableEventQueue {
    /// `post(_:)` for an array the test makes on the spot, and checks that the queue took it.
    func post(_ events: [QueuedTableEvent]) -> Bool {
        var taken = events
        let full = post(&taken)
        #expect(taken.isEmpty, "a post leaves the producer nothing of the events")
        return full
    }
}

/// The per-loop mailbox of `DeliveryPump`: events posted by the engine reach their sinks on the
/// loop, in order; past `mailboxLimit` the producer hands them over itself.
@Suite struct DeliveryPumpTests {
    static func events(_ range: Range<Int>, to sink: any QueuedTableSink) -> [QueuedTableEvent] {
        range.map { QueuedTableEvent(sink: sink, event: .update(item: 1, values: ["\($0)"], isSnapshot: false), shared: nil) }
    }

    @Test func postedEventsReachTheirSinksOnTheLoopInOrder() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let a = QueuedRecordingSink(queue: pump)
        let b = QueuedRecordingSink(queue: pump)
        #expect(!pump.post(Self.events(0..<3, to: a) + Self.events(0..<2, to: b)))
        #expect(!pump.post(Self.events(3..<5, to: a)))
        #expect(a.rows.isEmpty, "nothing before the loop runs")
        loop.run()
        #expect(a.rows == (0..<5).map { ["\($0)"] })
        #expect(b.rows == [["0"], ["1"]])
    }

    /// `maxUpdateDelayMillis`: the first run after a quiet spell waits that long, so that what
    /// comes meanwhile reaches the sessions together (one batch, one write per session).
    @Test func aDelayGathersWhatIsPostedWithinIt() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 5)
        let sink = QueuedRecordingSink(queue: pump)
        _ = pump.post(Self.events(0..<1, to: sink))
        loop.run()
        loop.advanceTime(by: .milliseconds(4))
        #expect(sink.rows.isEmpty, "held until the delay is over")
        _ = pump.post(Self.events(1..<2, to: sink))
        loop.advanceTime(by: .milliseconds(1))
        #expect(sink.rows == [["0"], ["1"]])
        // The pump went idle: the next post waits the delay again.
        _ = pump.post(Self.events(2..<3, to: sink))
        loop.advanceTime(by: .milliseconds(4))
        #expect(sink.rows.count == 2)
        loop.advanceTime(by: .milliseconds(1))
        #expect(sink.rows.count == 3)
    }

    @Test func theDelayIsBounded() {
        let loop = EmbeddedEventLoop()
        #expect(DeliveryPump(eventLoop: loop, delayMillis: .max).delayMillis == ServerConfiguration.Timeouts.maxUpdateDelayLimit)
        #expect(DeliveryPump(eventLoop: loop, delayMillis: -5).delayMillis == 0)
    }

    /// One post, however large, is the loop's to hand over; a post that finds more than
    /// `mailboxLimit` events still waiting from earlier ones tells the producer to hand over.
    @Test func aFullMailboxIsHandedOverByTheProducer() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let sink = QueuedRecordingSink(queue: pump)
        let limit = DeliveryPump.mailboxLimit
        #expect(!pump.post(Self.events(0..<(limit + 1), to: sink)), "one post past the limit waits for the loop")
        #expect(sink.rows.isEmpty, "up to the limit, events wait for the loop")
        let full = pump.post(Self.events((limit + 1)..<(limit + 2), to: sink))
        #expect(full, "a post behind more than the limit tells the producer to hand over")
        pump.flush()
        // The loop never ran: the producer's flush delivered everything, in order.
        #expect(sink.rows.count == limit + 2)
        #expect(sink.rows.first == ["0"] && sink.rows.last == ["\(limit + 1)"])
        loop.run()
        #expect(sink.rows.count == limit + 2, "nothing delivered twice")
    }

    /// Records the `handleNow` of each run it is handed.
    final class FlagSink: QueuedTableSink, @unchecked Sendable {
        let queue: any TableEventQueue
        private let flags = NIOLockedValueBox<[Bool]>([])
        init(queue: any TableEventQueue) { self.queue = queue }
        func deliver(_ event: TableEvent) {}
        func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) {}
        func deliver(run: inout [QueuedTableEvent], handleNow: Bool) {
            flags.withLockedValue { $0.append(handleNow) }
            run.removeAll(keepingCapacity: true)
        }
        var seen: [Bool] { flags.withLockedValue { $0 } }
    }

    /// The loop lets sessions handle a run at once only when it keeps up (a single post in
    /// hand); the producer's hand-over never does.
    @Test func onlyTheLoopKeepingUpLetsSessionsHandleRunsNow() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let sink = FlagSink(queue: pump)
        _ = pump.post(Self.events(0..<2, to: sink))
        loop.run()
        #expect(sink.seen == [true], "one post: handled now")
        _ = pump.post(Self.events(0..<2, to: sink))
        _ = pump.post(Self.events(2..<4, to: sink))
        loop.run()
        #expect(sink.seen == [true, false], "two posts waiting: the loop fell behind")
        _ = pump.post(Self.events(0..<1, to: sink))
        pump.flush()
        #expect(sink.seen == [true, false, false], "the producer's hand-over")
    }

    /// The posts of one table-major round never hold two runs of a sink: taken together by
    /// the loop, they are handled at once like a single post; posts of different rounds mean
    /// the loop fell behind.
    @Test func postsOfOneRoundAreHandledAsOne() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let a = FlagSink(queue: pump)
        let b = FlagSink(queue: pump)
        var first = Self.events(0..<2, to: a)
        var second = Self.events(0..<2, to: b)
        _ = pump.post(&first, round: 7)
        _ = pump.post(&second, round: 7)
        loop.run()
        #expect(a.seen == [true] && b.seen == [true], "one round: handled now")
        var third = Self.events(2..<4, to: a)
        var fourth = Self.events(2..<4, to: b)
        _ = pump.post(&third, round: 8)
        _ = pump.post(&fourth, round: 9)
        loop.run()
        #expect(a.seen == [true, false] && b.seen == [true, false], "two rounds waiting: the loop fell behind")
    }

    /// A round's posts waiting behind each other are not full however many events they hold;
    /// a post of another round behind more than the limit is.
    @Test func onlyPostsOfOtherRoundsMakeTheMailboxFull() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let sink = QueuedRecordingSink(queue: pump)
        let limit = DeliveryPump.mailboxLimit
        var first = Self.events(0..<(2 * limit), to: sink)
        var second = Self.events((2 * limit)..<(3 * limit), to: sink)
        var third = Self.events((3 * limit)..<(3 * limit + 1), to: sink)
        #expect(!pump.post(&first, round: 3))
        #expect(!pump.post(&second, round: 3), "behind its own round's post")
        #expect(pump.post(&third, round: 4), "behind another round's posts, past the limit")
        loop.run()
        #expect(sink.rows.count == 3 * limit + 1)
        #expect(sink.rows.last == ["\(3 * limit)"])
    }

    /// Up to the limit waiting, posts are not full whatever their size.
    @Test func postsBehindLessThanTheLimitAreNotFull() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let sink = QueuedRecordingSink(queue: pump)
        let limit = DeliveryPump.mailboxLimit
        #expect(!pump.post(Self.events(0..<limit, to: sink)))
        #expect(!pump.post(Self.events(limit..<(3 * limit), to: sink)), "exactly the limit waited")
        #expect(pump.post(Self.events((3 * limit)..<(3 * limit + 1), to: sink)))
        loop.run()
        #expect(sink.rows.count == 3 * limit + 1)
    }
}

/// `PostedEvents.handOver(until:)`: a hand-over stops between two sinks' runs once its
/// deadline has passed, and what it leaves goes on later in order, each event once.
@Suite struct PostedEventsDeadlineTests {
    @Test func aPassedDeadlineStopsBetweenRunsAndTheRestFollowsInOrder() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let sinks = (0..<100).map { _ in QueuedRecordingSink(queue: pump) }
        var posted = PostedEvents()
        // Three posts; each sink gets runs of 1 to 3 events in each.
        var expected: [ObjectIdentifier: [[String?]]] = [:]
        var serial = 0
        func post(_ post: Int) -> [QueuedTableEvent] {
            var events: [QueuedTableEvent] = []
            for (k, sink) in sinks.enumerated() {
                for _ in 0..<(1 + (k + post) % 3) {
                    events += DeliveryPumpTests.events(serial..<(serial + 1), to: sink)
                    expected[ObjectIdentifier(sink), default: []].append(["\(serial)"])
                    serial += 1
                }
            }
            return events
        }
        for p in 0..<3 { posted.append(post(p)) }
        let total = posted.count
        var rounds = 0
        var later = PostedEvents()
        while !posted.isEmpty {
            rounds += 1
            let before = posted.count
            // A deadline already passed: one clock reading's worth of runs each time.
            let finished = posted.handOver(until: 0)
            #expect(finished == posted.isEmpty)
            #expect(posted.count < before, "each hand-over makes progress")
            // Posts that came meanwhile, in the first rounds: into the mailbox (behind what
            // is left), or straight behind what is left.
            if rounds < 12, rounds % 3 == 1 { later.append(post(rounds)) }
            // What was left goes back in front of what came since.
            later.prepend(posted)
            posted = later
            later = PostedEvents()
            if rounds < 12, rounds % 3 == 2 { posted.append(post(rounds)) }
        }
        #expect(rounds > 2, "the deadline stopped the hand-over (\(rounds) rounds for \(total) events)")
        for sink in sinks {
            #expect(sink.rows == expected[ObjectIdentifier(sink)], "each sink got its events once, in order")
        }
    }
}

extension PostedEventsDeadlineTests {
    /// What a stopped hand-over left (kept reversed inside) can itself get events put in
    /// front of it: they come first, then the rest in its order.
    @Test func eventsPutInFrontOfAStoppedHandOverComeFirst() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let sinks = (0..<40).map { _ in QueuedRecordingSink(queue: pump) }
        var left = PostedEvents()
        left.append(sinks.enumerated().flatMap { k, sink in DeliveryPumpTests.events((k * 10)..<(k * 10 + 2), to: sink) })
        let finished = left.handOver(until: 0)
        #expect(!finished)
        let handed = sinks.filter { !$0.rows.isEmpty }.count
        #expect(handed > 0 && handed < sinks.count)
        var front = PostedEvents()
        front.append(sinks.enumerated().flatMap { k, sink in DeliveryPumpTests.events((1_000 + k)..<(1_001 + k), to: sink) })
        left.prepend(front)
        let finishedAll = left.handOver()
        #expect(finishedAll)
        for (k, sink) in sinks.enumerated() {
            let own: [[String?]] = [["\(k * 10)"], ["\(k * 10 + 1)"]]
            let expected = k < handed ? own + [["\(1_000 + k)"]] : [["\(1_000 + k)"]] + own
            #expect(sink.rows == expected, "sink \(k)")
        }
    }
}

/// A producer that posts faster than the loop hands over must not hold the loop: a run hands
/// over until its deadline, then lets the loop poll and comes back.
@Suite struct DeliveryPumpDeadlineTests {
    /// Posts one more event to its queue for each it receives, `limit` in all: a producer that
    /// never falls behind the loop.
    final class ChainSink: QueuedTableSink, @unchecked Sendable {
        let pump: DeliveryPump
        var queue: any TableEventQueue { pump }
        let limit: Int
        private(set) var received = 0
        init(pump: DeliveryPump, limit: Int) {
            self.pump = pump
            self.limit = limit
        }
        func deliver(_ event: TableEvent) { deliver(event, shared: nil) }
        func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) {
            received += 1
            if received < limit { _ = pump.post(DeliveryPumpTests.events(received..<(received + 1), to: self)) }
        }
    }

    @Test func aProducerThatNeverStopsPostingDoesNotHoldTheLoop() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let limit = 5_000_000
        let sink = ChainSink(pump: pump, limit: limit)
        _ = pump.post(DeliveryPumpTests.events(0..<1, to: sink))
        loop.run()
        let afterFirstRun = sink.received
        #expect(afterFirstRun > 0)
        #expect(afterFirstRun < limit, "the run handed over for as long as events came (\(afterFirstRun))")
        // The rest comes on later runs, each after the loop had its turn.
        loop.advanceTime(by: SaturationYield.short)
        #expect(sink.received > afterFirstRun)
    }
}

/// A run of the pump on a real event loop lets the writes that its sessions queued go out
/// every `writeStretchNanos`, rather than after the last session of a post.
@Suite struct DeliveryPumpStretchTests {
    /// A session that takes `handling` to handle its run, then queues its write on the loop
    /// (as `OutboundQueue` does), and records both.
    final class WritingSink: QueuedTableSink, @unchecked Sendable {
        let queue: any TableEventQueue
        let index: Int
        let loop: any EventLoop
        let journal: NIOLockedValueBox<[String]>
        let handling: UInt64
        init(queue: any TableEventQueue, index: Int, loop: any EventLoop, journal: NIOLockedValueBox<[String]>, handling: UInt64) {
            (self.queue, self.index, self.loop, self.journal, self.handling) = (queue, index, loop, journal, handling)
        }
        func deliver(_ event: TableEvent) {}
        func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) {}
        func deliver(run: inout [QueuedTableEvent], handleNow: Bool) {
            run.removeAll(keepingCapacity: true)
            let until = NIODeadline.now().uptimeNanoseconds &+ handling
            while NIODeadline.now().uptimeNanoseconds < until {}
            let (log, i) = (journal, index)
            log.withLockedValue { $0.append("handled \(i)") }
            loop.execute { log.withLockedValue { $0.append("wrote \(i)") } }
        }
    }

    @Test func writesGoOutBetweenStretchesOfOnePost() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let journal = NIOLockedValueBox<[String]>([])
        // 80 sessions of 20 µs each: 1.6 ms, within one slice (`sliceNanos`, 2 ms), so only
        // the stretches can let writes go out before the last session is handled.
        let sessions = 80
        let handling: UInt64 = 20_000
        #expect(DeliveryPump.writeStretchNanos * 4 < UInt64(sessions) * handling)
        #expect(UInt64(sessions) * handling < DeliveryPump.sliceNanos)
        var events: [QueuedTableEvent] = []
        for i in 0..<sessions {
            let sink = WritingSink(queue: pump, index: i, loop: loop, journal: journal, handling: handling)
            events += DeliveryPumpTests.events(0..<1, to: sink)
        }
        #expect(!pump.post(events))
        for _ in 0..<1_000 where journal.withLockedValue({ $0.count }) < 2 * sessions {
            try await Task.sleep(for: .milliseconds(10))
        }
        let entries = journal.withLockedValue { $0 }
        #expect(entries.count == 2 * sessions)
        // Every session handled, in the order posted, and every write after its own handling.
        #expect(entries.filter { $0.hasPrefix("handled") } == (0..<sessions).map { "handled \($0)" })
        for i in 0..<sessions {
            let handled = try #require(entries.firstIndex(of: "handled \(i)"))
            let wrote = try #require(entries.firstIndex(of: "wrote \(i)"))
            #expect(handled < wrote)
        }
        // The first write went out while sessions were still waiting to be handled.
        let firstWrite = try #require(entries.firstIndex(of: "wrote 0"))
        let lastHandled = try #require(entries.firstIndex(of: "handled \(sessions - 1)"))
        #expect(firstWrite < lastHandled, "writes waited for the whole post: \(entries.prefix(sessions + 2))")
        try await group.shutdownGracefully()
    }
}

/// `flush()` while another thread hands the mailbox over waits for that thread.
@Suite struct DeliveryPumpConcurrencyTests {
    @Test func aFlushWaitsForTheThreadAlreadyHandingOver() async throws {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let sink = GatedSink(queue: pump)
        #expect(!pump.post(DeliveryPumpTests.events(0..<3, to: sink)))
        let first = Thread { pump.flush() }
        first.start()
        // The first thread is inside the hand-over, held by the sink.
        #expect(await sink.waitEntered(seconds: 10))
        let second = NIOLockedValueBox(false)
        let waiter = Thread {
            pump.flush()
            second.withLockedValue { $0 = true }
        }
        waiter.start()
        try await Task.sleep(for: .milliseconds(100))
        #expect(!second.withLockedValue { $0 }, "returned before the events were handed over")
        sink.open()
        for _ in 0..<1_000 where !second.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(second.withLockedValue { $0 })
        #expect(sink.count == 3)
    }
}

/// A queued sink whose first delivery waits until `open()`.
final class GatedSink: QueuedTableSink, @unchecked Sendable {
    let queue: any TableEventQueue
    private let gate = DispatchSemaphore(value: 0)
    private let state = NIOLockedValueBox((entered: false, count: 0))

    init(queue: any TableEventQueue) { self.queue = queue }

    func deliver(_ event: TableEvent) { deliver(event, shared: nil) }
    func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) {
        let first = state.withLockedValue { s -> Bool in
            defer { s.entered = true }
            return !s.entered
        }
        if first { gate.wait() }
        state.withLockedValue { $0.count += 1 }
    }

    func open() { gate.signal() }
    var count: Int { state.withLockedValue { $0.count } }

    func waitEntered(seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if state.withLockedValue({ $0.entered }) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}
