/// Events grouped by the queue of their sinks (a few queues, one per event loop, so a linear
/// search, made only when the queue differs from the last one appended to).
struct QueuedPosts {
    private struct Group {
        let queue: any TableEventQueue
        var events: [QueuedTableEvent] = []
        /// The sink of the last event appended, which an event of `events` holds (so no other
        /// sink can have its address meanwhile): a next event of that sink continues its run
        /// without a reference of its own (`QueuedTableEvent.init(continuing:)`).
        var lastSink: ObjectIdentifier?
        /// The table slot of each event when they came with one (`append(_:to:slot:)`):
        /// `post()` then orders the events by table.
        var slots: [UInt32] = []
        /// Events counted by `plan`, not reserved yet.
        var planned = 0
    }

    /// One group per queue. The group being appended to is out of the array, in `current`
    /// (its place holds an empty group until it goes back): appending to an array inside an
    /// array checked the uniqueness of both, about 30 instructions per event
    /// (Benchmarks/server-callgrind.sh).
    private var groups: [Group] = []
    private var current: Group?
    /// `current`'s queue, compared without loading the existential.
    private var currentQueue: ObjectIdentifier?
    private var currentIndex = 0
    /// Capacity a group gets when it is made (see `ItemEngine.adapterUpdates`); 0: none.
    var reserveHint = 0
    /// The most events one group held in the last `post()`.
    private(set) var largestPosted = 0

    /// Makes room in `queue`'s group for `count` more events before they are appended (one
    /// allocation per queue and round, where growing from empty reallocated and copied the
    /// events a dozen times for a tick of the load test: about 80 instructions per event,
    /// Benchmarks/server-callgrind.sh). Call it for every queue first, then `reservePlanned()`.
    mutating func plan(_ count: Int, for queue: any TableEventQueue) {
        checkIn()
        let i = group(of: queue)
        groups[i].planned += count
    }

    /// Reserves what `plan` counted.
    mutating func reservePlanned() {
        checkIn()
        for i in groups.indices where groups[i].planned > 0 {
            groups[i].events.reserveCapacity(groups[i].planned)
            groups[i].planned = 0
        }
    }

    /// The index of `queue`'s group, made if it has none (`current` must be checked in).
    private mutating func group(of queue: any TableEventQueue) -> Int {
        if let i = groups.firstIndex(where: { $0.queue === queue }) { return i }
        var group = Group(queue: queue)
        if reserveHint > 0 { group.events.reserveCapacity(reserveHint) }
        groups.append(group)
        return groups.count - 1
    }

    /// Puts `current` back in its place.
    private mutating func checkIn() {
        currentQueue = nil
        if let group = current.take() { groups[currentIndex] = group }
    }

    /// Makes `queue`'s group `current`, moved out of the array (not copied: a copy would make
    /// its arrays shared, and the next append would copy them).
    private mutating func checkOut(_ queue: any TableEventQueue) {
        checkIn()
        let i = group(of: queue)
        var group = Group(queue: queue)
        swap(&group, &groups[i])
        current = group
        currentQueue = ObjectIdentifier(queue)
        currentIndex = i
    }

    /// `queue` is `event.sink.queue`, which the caller keeps at hand. `slot`: the number of
    /// the event's table in a Data Adapter batch (`DirectPosts.claimSlot()`), with which
    /// `post()` groups each table's events together, in order; nil outside a batch.
    mutating func append(_ event: consuming QueuedTableEvent, to queue: any TableEventQueue, slot: UInt32? = nil) {
        if currentQueue != ObjectIdentifier(queue) { checkOut(queue) }
        current?.lastSink = event.sink.map { ObjectIdentifier($0) }
        appendToCurrent(event, slot: slot)
    }

    /// Appends `payload` for the sink of `table` (which has one): as the continuation of the run
    /// appended last when that run is the same sink's, else as a run of its own (see
    /// `QueuedTableEvent.sink`). A run's events stay together when `post()` orders them by
    /// slot: they all have their table's slot. `table`'s queue is read only when it is not
    /// the current group's: passing it per event cost a retain and a release of the queue,
    /// which every session of a loop shares.
    mutating func append(_ payload: consuming EngineEvent, of table: TableRecord, slot: UInt32?) {
        if currentQueue != table.queueId, let queue = table.queue { checkOut(queue) }
        guard let id = table.queuedSinkId else { return }
        if current?.lastSink == id {
            appendToCurrent(QueuedTableEvent(continuing: payload), slot: slot)
        } else {
            current?.lastSink = id
            // Read in place (`queuedSinkId` is set exactly when `queuedSink` is): bound to a
            // local, the sink was retained twice and released once more per event.
            appendToCurrent(QueuedTableEvent(sink: table.queuedSink.unsafelyUnwrapped, payload: payload), slot: slot)
        }
    }

    @inline(__always)
    private mutating func appendToCurrent(_ event: consuming QueuedTableEvent, slot: UInt32?) {
        current?.events.append(event)
        if let slot { current?.slots.append(slot) }
    }

    /// Posts every group, as part of `round` (`TableEventQueue.post(_:round:)`); returns the
    /// queues that must be flushed.
    mutating func post(round: UInt64 = 0) -> [any TableEventQueue] {
        checkIn()
        var full: [any TableEventQueue] = []
        for g in groups.indices where groups[g].slots.count == groups[g].events.count && groups[g].slots.count > 1 {
            let slots = groups[g].slots
            groups[g].events = Self.grouped(&groups[g].events, bySlot: slots)
        }
        largestPosted = groups.reduce(0) { max($0, $1.events.count) }
        // A group that was planned for and got no event (its tables had only `started`) posts nothing.
        for g in groups.indices where !groups[g].events.isEmpty {
            // Moved out and handed over: the queue holds the only reference when its loop
            // takes the post (`TableEventQueue.post(_:round:)`).
            var events: [QueuedTableEvent] = []
            swap(&events, &groups[g].events)
            if groups[g].queue.post(&events, round: round) { full.append(groups[g].queue) }
        }
        groups.removeAll()
        return full
    }

    /// `events` moved into a new array, grouped by slot (ascending), keeping their order
    /// within a slot: a counting sort, `slots[i]` being the slot of `events[i]`.
    ///
    /// A batch's events come item by item, so one session's events are spread over the whole
    /// post; grouped, each session gets its events of the batch together. Spread, the loop ran
    /// the batches of sessions whose events were still being handed over by the producer, and
    /// those sessions wrote twice: 10.1–10.3 K writes per second at 1,000 sessions instead of
    /// one per session and tick, 10.0 K (BENCHMARKS.md, "Batches posted without the outboxes").
    static func grouped(_ events: inout [QueuedTableEvent], bySlot slots: [UInt32]) -> [QueuedTableEvent] {
        let n = events.count
        guard n == slots.count, n > 1 else { return events }
        var top: UInt32 = 0
        for slot in slots where slot > top { top = slot }
        // The end of each slot's run; filled from the end, taking the events from the last.
        var end = [Int](repeating: 0, count: Int(top) + 1)
        for slot in slots { end[Int(slot)] += 1 }
        var sum = 0
        for k in end.indices {
            sum += end[k]
            end[k] = sum
        }
        return [QueuedTableEvent](unsafeUninitializedCapacity: n) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            slots.withUnsafeBufferPointer { slots in
                end.withUnsafeMutableBufferPointer { end in
                    var i = n
                    // Moved out by `popLast`, not copied: a copy is a retain and a release of
                    // the event's sink, row and encoding.
                    while let event = events.popLast() {
                        i -= 1
                        let k = Int(slots[i])
                        end[k] -= 1
                        (base + end[k]).initialize(to: consume event)
                    }
                }
            }
            initialized = n
        }
    }
}

/// The events the engine sends straight to their sinks' queues.
///
/// With `owner` 0, those of one locked section, posted before it unlocks
/// (`DispatchContext.postDirect`). Otherwise those of one Data Adapter batch
/// (`ItemEngine.adapterUpdates`), over several locked sections: the batch holds the drain of
/// every table it sent to (`TableRecord.send(_:shared:ctx:)`) until it has posted them.
/// Touched under the engine's lock, or by the batch's own thread once it holds those drains.
///
/// `posts` is `@exclusivity(unchecked)`: one thread at a time touches it, and the dynamic
/// check cost some 80 instructions per event sent.
final class DirectPosts: @unchecked Sendable {
    @exclusivity(unchecked) var posts = QueuedPosts()
    /// The batch these posts belong to (`EngineState.makeId`); 0: one locked section.
    @exclusivity(unchecked) var owner: UInt64 = 0
    /// Tables claimed since the batch last posted (see `QueuedPosts.append(_:to:slot:)`).
    @exclusivity(unchecked) private var claimed: UInt32 = 0
    /// The `TableMajorRound` sending, 0: none. Its events come table by table already (no
    /// slots to order them by), and its posts say they belong to it
    /// (`TableEventQueue.post(_:round:)`).
    @exclusivity(unchecked) var round: UInt64 = 0

    /// The slot of a table this batch claims (numbered from 0 after each post).
    func claimSlot() -> UInt32 {
        defer { claimed &+= 1 }
        return claimed
    }

    /// `QueuedPosts.append(_:of:slot:)`. Called through the context's optional
    /// (`ctx.direct?.append`), which borrows this object, where reaching `posts` through
    /// `unsafelyUnwrapped` retained and released it for every event.
    @inline(__always)
    func append(_ payload: consuming EngineEvent, of table: TableRecord, slot: UInt32?) {
        posts.append(payload, of: table, slot: round == 0 ? slot : nil)
    }

    /// Posts what is held (see `QueuedPosts.post(round:)`); slots start again from 0.
    func post() -> [any TableEventQueue] {
        claimed = 0
        return posts.post(round: round)
    }
}
