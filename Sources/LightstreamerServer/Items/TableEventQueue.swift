/// A queue shared by many sinks (the server's sessions of one event loop) that takes events
/// in groups: the engine hands it all the events of one drain round for its sinks in one call,
/// so that fanning one update out to N sessions costs a lock per queue rather than per session.
///
/// The queue must hand every posted event to its sink (`SharedEncodingTableSink.deliver`) in
/// the order posted, and `flush()` must return only once everything posted before the call has
/// been handed over.
protocol TableEventQueue: AnyObject, Sendable {
    /// Queues `events`, in order. Returns true when the queue is full: the caller must call
    /// `flush()` once it holds no lock (the engine may post under its own).
    func post(_ events: [QueuedTableEvent]) -> Bool
    /// Hands over everything queued so far before returning (see `ItemEngine.unsubscribe`).
    func flush()
}

/// A sink that receives its events through a shared `TableEventQueue`.
protocol QueuedTableSink: SharedEncodingTableSink {
    var queue: any TableEventQueue { get }
    /// Takes consecutive events of this sink at once, in order, and empties `run` (keeping
    /// its capacity). Default: one by one (`QueuedTableEvent.deliver()`).
    func deliver(run: inout [QueuedTableEvent])
}

extension QueuedTableSink {
    func deliver(run: inout [QueuedTableEvent]) {
        run.moveOutInOrder { $0.deliver() }
    }
}

/// One event for one sink, waiting in a `TableEventQueue`.
struct QueuedTableEvent: Sendable {
    let sink: any QueuedTableSink
    let event: TableEvent
    let shared: SharedUpdateEncoding?

    /// Hands the event to its sink.
    consuming func deliver() { sink.deliver(event, shared: shared) }
}

/// The events posted to a queue and not handed over yet, kept as the arrays they were posted
/// in: appending a posted array moves it in, where copying its events into one array cost a
/// retain and a release of each event's sink, row and encoding (objects that every session of
/// the update shares, so their counts bounce between cores).
struct PostedEvents: Sendable {
    private var batches: [[QueuedTableEvent]] = []
    /// Events held, over all batches.
    private(set) var count = 0
    /// Consecutive events of one sink during `handOver()`; empty otherwise.
    private var run: [QueuedTableEvent] = []

    var isEmpty: Bool { count == 0 }

    mutating func append(_ events: [QueuedTableEvent]) {
        guard !events.isEmpty else { return }
        batches.append(events)
        count += events.count
    }

    /// Hands every event to its sink, in order, and empties this (keeping its capacity).
    ///
    /// Consecutive events of one sink go to it together (`QueuedTableSink.deliver(run:)`): a
    /// session takes its inbox's lock once for them rather than once per event. A Data
    /// Adapter batch posts each table's events together (`QueuedPosts.grouped`).
    mutating func handOver() {
        var sink: (any QueuedTableSink)?
        // Moved out: each event's sink, row and encoding go on to the session's inbox
        // without a retain.
        for b in batches.indices {
            batches[b].moveOutInOrder { event in
                if let current = sink, current !== event.sink {
                    current.deliver(run: &run)
                    sink = nil
                }
                if sink == nil { sink = event.sink }
                run.append(event)
            }
        }
        if let sink { sink.deliver(run: &run) }
        batches.removeAll(keepingCapacity: true)
        count = 0
    }
}
