import NIOCore

/// A queue shared by many sinks (the server's sessions of one event loop) that takes events
/// in groups: the engine hands it all the events of one drain round for its sinks in one call,
/// so that fanning one update out to N sessions costs a lock per queue rather than per session.
///
/// The queue must hand every posted event to its sink (`SharedEncodingTableSink.deliver`) in
/// the order posted, and `flush()` must return only once everything posted before the call has
/// been handed over. An event without a sink goes to the sink of the event before it in its
/// post (`QueuedTableEvent.sink`): a post's first event always has one.
protocol TableEventQueue: AnyObject, Sendable {
    /// Queues `events`, in order, and leaves `events` empty. Returns true when the queue is
    /// full: the caller must call `flush()` once it holds no lock (the engine may post under
    /// its own).
    ///
    /// `round`: the `TableMajorRound` the events belong to, whose posts never hold events of
    /// the same sink, so the queue may hand them over as if they came in one post; 0: a post
    /// of its own (`post(_:)`).
    ///
    /// The array is taken, not copied: the queue must hold its only reference once the post
    /// is visible to its consumer (`PostedEvents.append(moving:round:)` under the queue's lock).
    /// While the producer still held one, the loop that took the post found the array shared
    /// and copied it whole to hand it over (a retain of each event's sink and encoding), and
    /// the producer then released every event of the original.
    func post(_ events: inout [QueuedTableEvent], round: UInt64) -> Bool
    /// Hands over everything queued so far before returning (see `ItemEngine.unsubscribe`).
    func flush()
}

extension TableEventQueue {
    /// A post of its own (round 0).
    func post(_ events: inout [QueuedTableEvent]) -> Bool {
        post(&events, round: 0)
    }
}

/// A sink that receives its events through a shared `TableEventQueue`.
protocol QueuedTableSink: SharedEncodingTableSink {
    var queue: any TableEventQueue { get }
    /// Takes consecutive events of this sink at once, in order, and empties `run` (keeping
    /// its capacity). Default: one by one (`QueuedTableEvent.deliver()`). `handleNow`: the
    /// hand-over runs on the sinks' event loop and the loop keeps up (it took a single post),
    /// so the sink may handle the run at once rather than queue it.
    func deliver(run: inout [QueuedTableEvent], handleNow: Bool)
}

extension QueuedTableSink {
    func deliver(run: inout [QueuedTableEvent], handleNow: Bool) {
        run.moveOutInOrder { $0.deliver(continuing: self) }
    }
}

/// One event for one sink, waiting in a `TableEventQueue`.
struct QueuedTableEvent: Sendable {
    /// The event's sink; nil: the sink of the event before it in its post, of which it
    /// continues the run (`QueuedPosts.append(_:of:slot:)`). A run's first event holds the
    /// sink, and so keeps it alive while the others travel with it. One reference per event
    /// was a retain on the producer's thread and a release on the loop's for every event of a
    /// tick (BENCHMARKS.md, "Moves instead of copies on the fan-out's path").
    let sink: (any QueuedTableSink)?
    let payload: EngineEvent

    init(sink: any QueuedTableSink, payload: consuming EngineEvent) {
        self.sink = sink
        self.payload = payload
    }

    /// An event that continues the run of the event posted just before it, for the same sink.
    init(continuing payload: consuming EngineEvent) {
        self.sink = nil
        self.payload = payload
    }

    /// Whether the event starts a run for a sink other than `current`, the sink of the run
    /// before it; false for an event that continues a run.
    @inline(__always)
    func startsRun(after current: any QueuedTableSink) -> Bool {
        guard let mine = sink else { return false }
        return mine !== current
    }

    /// Hands the event to its sink, or to `runSink` (the sink of its run) when it continues a
    /// run.
    consuming func deliver(continuing runSink: any QueuedTableSink) {
        let (event, shared) = payload.split()
        (sink ?? runSink).deliver(event, shared: shared)
    }
}

/// The events posted to a queue and not handed over yet, kept as the arrays they were posted
/// in: appending a posted array moves it in, where copying its events into one array cost a
/// retain and a release of each event's sink, row and encoding (objects that every session of
/// the update shares, so their counts bounce between cores).
struct PostedEvents: Sendable {
    private var batches: [[QueuedTableEvent]] = []
    /// The round of each of `batches` (`TableEventQueue.post(_:round:)`; 0: none).
    private var rounds: [UInt64] = []
    /// `batches[0]` is what a hand-over that stopped at its deadline left of a batch, kept in
    /// reverse order (its next event last), as the hand-over pops them: going on needs no
    /// reversal. Reversing it back at every stop, and again at the next hand-over, cost two
    /// passes over what was left of the batch for every slice of 2 ms: quadratic in the size
    /// of a post, and a post holds up to 65,536 events (`ItemEngine.eventsPerDrain`).
    private var headReversed = false
    /// Events held, over all batches.
    private(set) var count = 0
    /// Consecutive events of one sink during `handOver()`; empty otherwise.
    private var run: [QueuedTableEvent] = []

    var isEmpty: Bool { count == 0 }
    /// Whether the posts held are as one: a single post, or posts of one round (which never
    /// hold two runs of the same sink).
    var isOnePost: Bool {
        guard let first = rounds.first, batches.count > 1 else { return true }
        return first != 0 && rounds.allSatisfy { $0 == first }
    }

    /// Whether some post held is not part of `round` (any post, for round 0).
    func holdsPosts(besides round: UInt64) -> Bool {
        round == 0 ? !batches.isEmpty : rounds.contains { $0 != round }
    }

    mutating func append(_ events: [QueuedTableEvent], round: UInt64 = 0) {
        guard !events.isEmpty else { return }
        batches.append(events)
        rounds.append(round)
        count += events.count
    }

    /// Appends `events` and leaves the argument empty, so that this holds the array's only
    /// reference (see `TableEventQueue.post(_:round:)`).
    mutating func append(moving events: inout [QueuedTableEvent], round: UInt64 = 0) {
        var moved: [QueuedTableEvent] = []
        swap(&moved, &events)
        append(moved, round: round)
    }

    /// Hands every event to its sink, in order, and empties this (keeping its capacity).
    ///
    /// Consecutive events of one sink go to it together (`QueuedTableSink.deliver(run:)`): a
    /// session takes its inbox's lock once for them rather than once per event. A Data
    /// Adapter batch posts each table's events together (`QueuedPosts.grouped`).
    ///
    /// `handleNow` is passed on to the sinks (`QueuedTableSink.deliver(run:handleNow:)`).
    ///
    /// With a `deadline` (uptime nanoseconds), it stops between two sinks' runs once the
    /// deadline has passed (looked at every `runsPerClockRead` runs) and returns false: what
    /// is left stays here, in order. A sink may do a session's whole batch in `deliver(run:)`
    /// (`ServerSession.enqueueTableEvents`), so a hand-over can last as long as the sessions'
    /// batches, which a loop runs a slice at a time (`DeliveryPump`).
    @discardableResult
    mutating func handOver(until deadline: UInt64? = nil, handleNow: Bool = false) -> Bool {
        var sink: (any QueuedTableSink)?
        var runs = 0
        for b in batches.indices {
            // Out of the array while it is emptied: popping from an array inside an array
            // checked the uniqueness of both for every event.
            var events: [QueuedTableEvent] = []
            swap(&events, &batches[b])
            if b > 0 || !headReversed { events.reverseInPlace() }
            // Moved out: each event's sink, row and encoding go on to the session without a
            // retain.
            while let event = events.popLast() {
                // An event without a sink continues the run of the one before it (a post
                // starts with a sink, and a hand-over stops only before an event that starts
                // a run).
                if let current = sink, event.startsRun(after: current) {
                    current.deliver(run: &run, handleNow: handleNow)
                    sink = nil
                    runs &+= 1
                    if let deadline, runs % Self.runsPerClockRead == 0, NIODeadline.now().uptimeNanoseconds >= deadline {
                        // Back where it was popped from: the rest stays reversed.
                        events.append(event)
                        swap(&events, &batches[b])
                        keep(from: b)
                        headReversed = true
                        return false
                    }
                }
                if sink == nil, let first = event.sink { sink = first }
                run.append(consume event)
            }
        }
        if let sink { sink.deliver(run: &run, handleNow: handleNow) }
        batches.removeAll(keepingCapacity: true)
        rounds.removeAll(keepingCapacity: true)
        headReversed = false
        count = 0
        return true
    }

    /// Runs handed over between two readings of the clock in `handOver(until:)`.
    static let runsPerClockRead = 16

    /// Drops the batches before `first` (all handed over).
    private mutating func keep(from first: Int) {
        batches.removeFirst(first)
        rounds.removeFirst(first)
        count = batches.reduce(0) { $0 + $1.count }
    }

    /// Puts `earlier`'s events before these (what a hand-over left, back in front of what
    /// was posted since).
    mutating func prepend(_ earlier: consuming PostedEvents) {
        guard !earlier.isEmpty else { return }
        // This one's first batch is no longer first: back in order (not the case of the
        // pump's use, where only new posts wait behind what a hand-over left).
        if headReversed, !batches.isEmpty { batches[0].reverseInPlace() }
        let count = earlier.count
        headReversed = earlier.headReversed
        // Moved out of `earlier`, not copied: a copy was shared, so appending to it (even
        // nothing) made new arrays, two allocations for every hand-over stopped at its deadline.
        var batches: [[QueuedTableEvent]] = []
        var rounds: [UInt64] = []
        swap(&batches, &earlier.batches)
        swap(&rounds, &earlier.rounds)
        // The branch is not redundant: appending even an empty array to the moved one
        // allocated again (Benchmarks/mallocs-per-update.sh, 0.008 calls per update).
        if self.batches.isEmpty {
            self.batches = batches
            self.rounds = rounds
        } else {
            batches.append(contentsOf: self.batches)
            self.batches = batches
            rounds.append(contentsOf: self.rounds)
            self.rounds = rounds
        }
        // The run buffer with the more room stays (`earlier`'s, emptied by its hand-over,
        // is otherwise dropped, and the next hand-over grew a new one event by event).
        if earlier.run.isEmpty, run.isEmpty, earlier.run.capacity > run.capacity { swap(&run, &earlier.run) }
        self.count += count
    }
}
