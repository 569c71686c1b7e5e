import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The engine-event path of the sessions of one event loop.
///
/// **Mailbox.** The engine posts the events of a drain round for all the sessions of this
/// loop in one call (`TableEventQueue.post`): fanning an update out to N sessions costs the
/// producer one lock per loop, and an append per session into one contiguous array, instead
/// of a lock and a write into each session's inbox (whose cache lines the loop's thread then
/// pulls back). The loop hands the events over at the start of each run: a session with
/// nothing waiting in its inbox handles them at once (its batch runs inside the hand-over,
/// `ServerSession.enqueueTableEvents`); otherwise they wait in its inbox (`SessionInbox`,
/// where MERGE updates conflate when a session is behind). When a post finds more than
/// `mailboxLimit` events still waiting from earlier posts, the producer hands them over itself
/// (`post` says so, and the engine calls `flush` once it unlocked), into the inboxes: the loop
/// is far behind, and the producer slows down instead of the mailbox growing. The posts of
/// one round (`TableMajorRound`) count as one. The mailbox holds at most the limit plus one
/// post or round (the engine posts at most some 70 K events at once or in one round,
/// `ItemEngine.eventsPerDrain`); a session's inbox has its own bound, past which its batch
/// runs on the caller's thread (see `ServerSession`).
///
/// **Batches.** Sessions with a batch waiting add themselves (`add`); the pump runs their
/// batches (`ServerSession.drainInbox`) as one task. A run hands the mailbox over for up to
/// `sliceNanos` (stopping between two sessions' runs, `PostedEvents.handOver(until:)`, the
/// rest going back in front of the mailbox), runs batches for up to `sliceNanos` after each
/// hand-over, and stops after two slices in all (see `handOverIfFree` for why the hand-over
/// has a deadline). While a loop that keeps up hands a post over, the run also stops every
/// `writeStretchNanos` so that the writes queued so far go out (see `run(spent:)`). NIO runs
/// queued tasks until none are left before it polls its sockets again:
/// if every session scheduled its own task, a producer faster than the loop would keep the
/// queue from ever emptying and the loop would stop accepting connections and reading
/// requests. After a slice the pump reschedules itself a little ahead (`SaturationYield`):
/// only a task that is not due yet lets the loop poll its sockets (NIO runs due tasks,
/// scheduled or not, until none is left). 250 µs: with 50 µs, at 5,000 sessions under
/// overload, the pump was due again before the producer's tick ended, the loop stopped
/// accepting and new sessions timed out; 1 ms added latency (BENCHMARKS.md, "Fan-out per event
/// loop"). A pump busy for 100 ms waits 2 ms once, for a loop so saturated that 250 µs is not
/// enough.
final class DeliveryPump: TableEventQueue {
    let eventLoop: any EventLoop
    /// Delay of the first run after the pump went idle (`SessionSettings.maxUpdateDelayMillis`).
    let delayMillis: Int
    static let sliceNanos: UInt64 = 2_000_000
    /// Events waiting in the mailbox past which a post makes the producer hand them over
    /// itself (until 2026-11-28 the count included the post itself, so that every tick of
    /// 10,000 events at 1,000 sessions was "full"). Under overload the
    /// producer then does part of the hand-over on its own thread while the loop runs batches.
    /// With the hand-over's deadline, 8,000 sessions at 800 K updates/s got 34 % of them at p99
    /// 1.26 s with 16,384, 36 % at 0.94 s with 8,192, and 52–60 % at 0.69–0.75 s with 4,096
    /// (BENCHMARKS.md, "Fewer checks and copies per update; overload at twice the capacity").
    static let mailboxLimit = 4_096

    private struct State {
        var mailbox = PostedEvents()
        /// An emptied former mailbox, kept to avoid an allocation per run.
        var spare = PostedEvents()
        var ready = ReadyQueue<ServerSession>()
        var scheduled = false
        /// The wait between runs while work is left (see above).
        var yield = SaturationYield()
        /// A thread is handing mailbox events to their sessions; it goes on until it finds
        /// the mailbox empty, so one at a time keeps the order.
        var handingOver = false
        /// Events ever posted, and ever handed over (what a waiting `flush` compares).
        var posted = 0
        var handedOver = 0
    }

    private let state = NIOLockedValueBox(State())

    /// `delayMillis` is taken within 0…`ServerConfiguration.Timeouts.maxUpdateDelayLimit`.
    init(eventLoop: any EventLoop, delayMillis: Int) {
        self.eventLoop = eventLoop
        self.delayMillis = min(max(delayMillis, 0), ServerConfiguration.Timeouts.maxUpdateDelayLimit)
    }

    // MARK: - TableEventQueue

    func post(_ events: inout [QueuedTableEvent], round: UInt64) -> Bool {
        guard !events.isEmpty else { return false }
        let count = events.count
        let (schedule, full) = state.withLockedValue { s -> (Bool, Bool) in
            // Full when what waited already passed the limit: one post, however large (the
            // engine posts at most some 70 K events at a time, `ItemEngine.eventsPerDrain`),
            // is the loop's to hand over, straight to its sessions; the producer hands over
            // itself only when the loop has not even taken the posts before. The posts of one
            // round (`TableMajorRound`) count as one: the loop writes the first while the
            // producer posts the next.
            let full = s.mailbox.count > Self.mailboxLimit && s.mailbox.holdsPosts(besides: round)
            s.mailbox.append(moving: &events, round: round)
            s.posted &+= count
            if s.scheduled { return (false, full) }
            s.scheduled = true
            return (true, full)
        }
        if schedule { scheduleRun() }
        return full
    }

    /// Returns once everything posted before the call is handed over: by this thread, or by
    /// the one handing over already (waited for in steps of 50 µs; it never waits on this
    /// thread, and the callers, a full producer or an `unsubscribe`, hold no lock).
    func flush() {
        let target = state.withLockedValue { $0.posted }
        while !handOverIfFree(until: nil) {
            if state.withLockedValue({ $0.handedOver &- target >= 0 }) { return }
            usleep(50)
        }
    }

    /// Hands the mailbox over unless another thread is doing it (then returns false at once:
    /// the loop never blocks on a producer that is handing over a full mailbox).
    ///
    /// It goes on with what was posted meanwhile until the mailbox is empty, or until
    /// `deadline` (uptime nanoseconds) has passed. The loop gives a deadline: a producer that
    /// posts faster than the loop hands over would otherwise keep the loop handing over for
    /// ever, no session would run its batch or write, and the mailbox would never fill up to
    /// slow the producer down. Under twice the load the machine carries, that starved the
    /// sessions: 8,000 sessions got 9–19 % of the offered updates, at p99 3.5–6.9 s
    /// (BENCHMARKS.md, "Overload at twice the capacity"). The deadline is looked at between
    /// sessions' runs too, not only between posts: sessions with nothing waiting run their
    /// batch inside the hand-over, and one post holds a whole tick of the load test. A post's
    /// events of one session are together (`QueuedPosts.grouped`), so that session's updates
    /// of one producer burst still go out in one write.
    @discardableResult
    private func handOverIfFree(until deadline: UInt64?) -> Bool {
        var events = state.withLockedValue { s -> PostedEvents? in
            guard !s.handingOver else { return nil }
            s.handingOver = true
            return take(&s)
        }
        guard events != nil else { return false }
        while var batch = events, !batch.isEmpty {
            events = nil
            let count = batch.count
            // The loop (a deadline) with a single post in hand, or the posts of one round
            // (`TableMajorRound`), keeps up: its sessions with nothing waiting run their
            // batch now. Several posts otherwise mean it fell behind: the
            // events go to the inboxes, where each session's events of all of them make one
            // batch and one write (handled at once, a tick split into several posts, as at
            // 5,000 sessions, made a write per post: 48 K writes per second instead of 31 K,
            // BENCHMARKS.md, "Batches handled during the hand-over").
            let finished = batch.handOver(until: deadline, handleNow: deadline != nil && batch.isOnePost)
            let left = batch
            events = state.withLockedValue { s -> PostedEvents? in
                s.handedOver &+= count &- left.count
                if finished {
                    s.spare = left
                } else {
                    // Stopped at the deadline: the rest goes first next time.
                    s.mailbox.prepend(left)
                }
                if !finished || s.mailbox.isEmpty || Self.hasPassed(deadline) {
                    s.handingOver = false
                    return nil
                }
                return take(&s)
            }
        }
        if events != nil { state.withLockedValue { $0.handingOver = false } }
        return true
    }

    /// Whether `deadline` (uptime nanoseconds; nil: none) has passed.
    private static func hasPassed(_ deadline: UInt64?) -> Bool {
        guard let deadline else { return false }
        return NIODeadline.now().uptimeNanoseconds >= deadline
    }

    private func take(_ s: inout State) -> PostedEvents {
        let taken = s.mailbox
        s.mailbox = s.spare
        s.spare = PostedEvents()
        return taken
    }

    // MARK: - Batches

    /// `session` has a batch waiting (it adds itself once per batch).
    func add(_ session: ServerSession) {
        let schedule = state.withLockedValue { s -> Bool in
            s.ready.append(session)
            if s.scheduled { return false }
            s.scheduled = true
            return true
        }
        if schedule { scheduleRun() }
    }

    private func scheduleRun() {
        if delayMillis > 0 {
            eventLoop.scheduleTask(in: .milliseconds(Int64(delayMillis))) { self.run() }
        } else {
            eventLoop.execute { self.run() }
        }
    }

    private func run() { run(spent: 0) }

    /// How long a run hands posts over (its sessions handling their runs at once) before the
    /// writes they queued go out (see `run(spent:)`).
    static let writeStretchNanos: UInt64 = 250_000

    /// A run, or the rest of one that has spent `spent` nanoseconds of its first slice.
    ///
    /// Every session's write is a task of its own on the loop (`OutboundQueue`), which NIO
    /// runs only once this one returns. So while a loop that keeps up hands a post over, its
    /// sessions handling their runs at once, the run stops every `writeStretchNanos` and
    /// queues its own continuation behind the writes queued so far: they go out while later
    /// sessions are still to be handled, instead of all after the last one. At 1,000 sessions
    /// a tick's first writes went out only once the loop had handled all of its sessions
    /// (BENCHMARKS.md, "Writes between stretches of a run"). The writes between stretches do
    /// not count against the slice.
    ///
    /// Batches (sessions that fell behind) run as before, their writes after the run. Under
    /// twice the load the machine carries (16,000 sessions, one thread), stretching them too
    /// delivered 36–43 % of the updates at p99 0.8–0.9 s, against 51–53 % at p99 0.63–0.66 s
    /// without.
    private func run(spent: UInt64) {
        let start = NIODeadline.now().uptimeNanoseconds &- spent
        while true {
            let stretchEnd = min(NIODeadline.now().uptimeNanoseconds &+ Self.writeStretchNanos, start &+ Self.sliceNanos)
            let handedOver = handOverIfFree(until: stretchEnd)
            // Batches get a slice of their own after the hand-over.
            let batchesStart = NIODeadline.now().uptimeNanoseconds
            if handedOver, batchesStart &- start < Self.sliceNanos, state.withLockedValue({ !$0.mailbox.isEmpty }) {
                // The stretch ended within the slice, with more to hand over: writes first.
                eventLoop.execute { self.run(spent: batchesStart &- start) }
                return
            }
            let batch = state.withLockedValue { s -> ArraySlice<ServerSession>? in
                // What the last run left goes first; sessions added since wait behind it.
                let b = s.ready.take()
                if b.isEmpty && s.mailbox.isEmpty {
                    s.scheduled = false
                    s.yield.idle()
                    return nil
                }
                return b
            }
            // Nothing ready and nothing posted: done until the next post or add.
            guard let batch else { return }
            if batch.isEmpty, batchesStart &- start > Self.sliceNanos {
                // Only posts (another thread is handing them over): let the loop poll.
                let wait = state.withLockedValue { $0.yield.wait(at: batchesStart) }
                eventLoop.scheduleTask(in: wait) { self.run() }
                return
            }
            for i in batch.indices {
                batch[i].drainInbox()
                let now = NIODeadline.now().uptimeNanoseconds
                // A slice of batches after each hand-over, and two slices in all per run.
                if now &- batchesStart > Self.sliceNanos || now &- start > 2 * Self.sliceNanos {
                    let rest = batch[(i + 1)...]
                    let wait = state.withLockedValue { s in
                        s.ready.leave(rest)
                        return s.yield.wait(at: now)
                    }
                    // Still scheduled: producers keep posting; the loop polls first.
                    eventLoop.scheduleTask(in: wait) { self.run() }
                    return
                }
            }
        }
    }
}
