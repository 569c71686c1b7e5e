/// The records the `ItemEngine` keeps under its lock. Only the engine touches them, always
/// inside `ItemEngine.store.withLockedValue`.

/// One upstream item: (adapter set, data adapter, item name).
struct ItemKey: Hashable, Sendable, CustomStringConvertible {
    var adapterSet: String
    var dataAdapter: String
    var item: String

    var description: String { "\(adapterSet)/\(dataAdapter)/\(item)" }
}

/// A link in the chain of Data Adapter calls for one item (`subscribe`/`unsubscribe` never
/// overlap for an item: each waits for the previous one).
struct UpstreamOp: Sendable {
    let id: UInt64
    let wait: @Sendable () async -> Void
}

/// An upstream item with its shared state and who uses it.
///
/// Records are reference types so that the fan-out follows references instead of moving
/// values in and out of dictionaries. They are `@unchecked Sendable` because their mutable
/// state is only ever read or written while holding the engine's lock (`ItemEngine.store`):
/// the lock makes them safe, which the compiler cannot see.
///
/// The properties the fan-out touches per event are `@exclusivity(unchecked)`: the lock already
/// serialises every access, and Swift's dynamic check of each one (a thread-local access set,
/// entered and left) cost about 80 instructions per access, about 380 per delivered update
/// (BENCHMARKS.md, "Fewer checks and copies per update"). No access to them overlaps another:
/// each is a single read or a single in-place change.
final class ItemRecord: @unchecked Sendable {
    /// Distinguishes this record from a later one for the same key (after an unsubscribe).
    let generation: UInt64
    let adapter: any DataAdapter
    @exclusivity(unchecked) var state: ItemState
    /// The `TableMajorRound` that last applied an update to this item, and that update's
    /// index in it.
    @exclusivity(unchecked) var roundId: UInt64 = 0
    @exclusivity(unchecked) var roundIndex: UInt32 = 0
    /// The Data Adapter's `subscribe` call.
    let subscribeTask: Task<Result<Void, ItemEngineError>, Never>?
    var subscribeSucceeded = false
    /// Subscriptions waiting for the upstream subscribe before they start.
    var reservations = 0
    /// Running subscriptions, with the 0-based positions of this item in each, in one
    /// contiguous array that the fan-out walks by index (a dictionary's values cost a call
    /// per step to find the next bucket). Order is arbitrary: each subscription has its own
    /// sink, and removal moves the last entry into the hole.
    @exclusivity(unchecked) private(set) var subscribers: [Subscriber] = []
    /// Where each table's entry is in `subscribers`, by table id.
    private var subscriberSlots: [UInt64: Int] = [:]
    /// The last row projected per field schema and kind (MERGE or event rows), which the next
    /// update's `SharedUpdateEncoding` is relative to.
    var sharedRows: [Int: [String?]] = [:]

    /// A subscription's positions of this item: the first one kept inline, since an item is
    /// almost always at one position of a subscription (an array per subscriber cost the fan-out
    /// a cache miss per session per update, to read its count).
    struct Subscriber {
        let table: TableRecord
        let id: UInt64
        let first: Int
        /// Further positions of the same item, in order (usually empty).
        var more: [Int] = []

        /// Every position, in order.
        var positions: [Int] { [first] + more }
    }

    /// Records that the subscription `table` (id `id`) has this item at `position`.
    func addSubscriber(_ table: TableRecord, id: UInt64, position: Int) {
        if let slot = subscriberSlots[id] {
            subscribers[slot].more.append(position)
        } else {
            subscriberSlots[id] = subscribers.count
            subscribers.append(Subscriber(table: table, id: id, first: position))
        }
    }

    /// Forgets the subscription with table id `id`.
    func removeSubscriber(id: UInt64) {
        guard let slot = subscriberSlots.removeValue(forKey: id), slot < subscribers.count else { return }
        let last = subscribers.count - 1
        if slot != last {
            subscribers.swapAt(slot, last)
            subscriberSlots[subscribers[slot].id] = slot
        }
        subscribers.removeLast()
    }

    func removeAllSubscribers() {
        subscribers.removeAll()
        subscriberSlots.removeAll()
    }

    init(
        generation: UInt64, adapter: any DataAdapter, state: ItemState,
        subscribeTask: Task<Result<Void, ItemEngineError>, Never>?, reservations: Int
    ) {
        self.generation = generation
        self.adapter = adapter
        self.state = state
        self.subscribeTask = subscribeTask
        self.reservations = reservations
    }

    var isUnused: Bool { reservations == 0 && subscribers.isEmpty }
}

/// What a table delivers, in order, through its sink.
enum Outgoing: Sendable {
    case started(TableHandle)
    case event(EngineEvent)

    /// The event, moved out without a retain (nil for `started`).
    consuming func takeEvent() -> EngineEvent? {
        switch consume self {
        case .started: return nil
        case .event(let event): return event
        }
    }
}

/// One item of one subscription: delivery state only.
struct SubscribedItem: Sendable {
    let key: ItemKey
    let generation: UInt64
    let wantsSnapshot: Bool
    /// DISTINCT: how many past events make the snapshot.
    let snapshotLength: Int
    var gate: DeliveryGate
    /// COMMAND with a selector: keys the client currently holds.
    var visibleKeys: Set<String> = []
}

/// One subscription ("table"). A lock-protected reference type, like `ItemRecord`, with the
/// per-event properties unchecked for the same reason.
final class TableRecord: @unchecked Sendable {
    // The properties every update reads come first, so that they share the record's first
    // cache lines: the producer visits one record per session per update, and each line it
    // touches is usually a miss (BENCHMARKS.md, "Flags in the subscription's record").
    @exclusivity(unchecked) var closed = false
    @exclusivity(unchecked) var draining = false
    let mode: SubscriptionMode
    /// No frequency limit: every item's gate delivers at once (kept by `applyFrequency`).
    @exclusivity(unchecked) var gatesOpen: Bool
    /// This table's slot in the batch that holds its drain (`DirectPosts.claimSlot()`).
    @exclusivity(unchecked) var batchSlot: UInt32 = 0
    /// This table's place in the `TableMajorRound` `roundId` (the last that fanned out to it).
    @exclusivity(unchecked) var roundSlot: UInt32 = 0
    @exclusivity(unchecked) var roundId: UInt64 = 0
    /// The batch (`DirectPosts.owner`) that holds this table's drain while its direct events
    /// wait to be posted; 0: none.
    @exclusivity(unchecked) var drainOwner: UInt64 = 0
    let schemaId: Int
    /// `items.count` once subscribed, known without reading the array's buffer.
    let itemCount: Int
    /// Items waiting for the Data Adapter to finish their snapshot.
    @exclusivity(unchecked) var waitingForSnapshot = PositionSet()
    /// MERGE items whose next row goes out flagged as the snapshot (no row existed when
    /// subscribed).
    @exclusivity(unchecked) var firstIsSnapshot = PositionSet()
    /// `sink` when it takes its events through a shared queue (`ItemEngine.run` groups them).
    let queuedSink: (any QueuedTableSink)?
    /// `queuedSink`'s identity, compared per event without loading the existential
    /// (`QueuedPosts.append(_:of:slot:)`).
    let queuedSinkId: ObjectIdentifier?
    /// `queuedSink`'s queue, read once here: asking the sink for it per event cost the
    /// producer two cache misses per session (the sink, then its session).
    let queue: (any TableEventQueue)?
    /// `queue`'s identity, compared per event without touching the queue (`QueuedPosts`).
    let queueId: ObjectIdentifier?
    let fields: [String]
    let selector: ItemSelector?
    @exclusivity(unchecked) var items: [SubscribedItem] = []
    @exclusivity(unchecked) var outbox: [Outgoing] = []
    let handle: TableHandle
    let sink: any TableSink
    /// `sink` when it can take shared encodings (the server's sessions), found once here
    /// rather than by a cast per event.
    let sharingSink: (any SharedEncodingTableSink)?
    let keyIndex: Int?
    let commandIndex: Int?
    /// The lowest Metadata Adapter frequency limit among the items (nil: none).
    let metadataLimit: Double?
    var frequency: RequestedFrequency
    /// An emptied former outbox, reused to avoid an allocation per batch.
    var spare: [Outgoing] = []
    var waiters: [CheckedContinuation<Void, Never>] = []

    init(handle: TableHandle, sink: any TableSink, plan: TablePlan, schemaId: Int) {
        self.handle = handle
        self.sink = sink
        self.sharingSink = sink as? any SharedEncodingTableSink
        self.queuedSink = sink as? any QueuedTableSink
        self.queuedSinkId = queuedSink.map { ObjectIdentifier($0) }
        self.queue = queuedSink?.queue
        self.queueId = queue.map { ObjectIdentifier($0) }
        self.mode = plan.mode
        self.fields = plan.fields
        self.schemaId = schemaId
        self.keyIndex = plan.keyIndex
        self.commandIndex = plan.commandIndex
        self.selector = plan.selector
        self.metadataLimit = plan.metadataLimit
        self.frequency = plan.frequency
        self.itemCount = plan.items.count
        // `interval` reads the properties set above; every stored property needs a value first.
        self.gatesOpen = true
        self.gatesOpen = interval == nil
    }

    /// Queues an event; returns true when the caller must drain this table (nobody else is).
    func send(_ event: TableEvent, shared: SharedUpdateEncoding? = nil) -> Bool {
        send(.event(event, shared))
    }

    /// `send(_:shared:)` for an `EngineEvent`.
    func send(_ event: consuming EngineEvent) -> Bool {
        guard !closed else { return false }
        outbox.append(.event(consume event))
        return claimDrain()
    }

    /// `send(_:ctx:)` for an update whose row is `encoding.values` (`EngineEvent.shared`).
    func sendShared(item: Int, isSnapshot: Bool, _ encoding: consuming SharedUpdateEncoding, ctx: DispatchContext) -> Bool {
        // `consume`: the event takes this reference. Copied, it was retained for the event and
        // released here, two atomic operations per event on a counter that the producer and
        // both loops touch (Benchmarks/server-callgrind-functions.sh).
        send(.shared(item: item, isSnapshot: isSnapshot, encoding: consume encoding), ctx: ctx)
    }

    func send(_ event: consuming TableEvent, shared: consuming SharedUpdateEncoding?, ctx: DispatchContext) -> Bool {
        send(.event(consume event, consume shared), ctx: ctx)
    }

    /// `send(_:shared:)`, straight to the sink's queue when the section posts directly and
    /// nothing of this table waits in its outbox or is being delivered by another drain (so
    /// the event cannot overtake one).
    ///
    /// A batch's posts (`DirectPosts.owner` not 0) wait until the batch posts them: the first
    /// one claims the table's drain for the batch (returns true, so the batch drains the table
    /// once it has posted), and the batch's later events for the table go straight on while
    /// its outbox stays empty. An event from elsewhere meanwhile finds the drain held and goes
    /// to the outbox, behind them.
    func send(_ event: consuming EngineEvent, ctx: DispatchContext) -> Bool {
        // A table that nobody drains has an empty outbox (`nextDrainStep` releases the drain
        // only then, or once closed): the outbox is read only when the drain is held.
        guard !closed, queuedSink != nil, queue != nil, let owner = ctx.direct?.owner,
            !draining || (owner != 0 && drainOwner == owner && outbox.isEmpty)
        else { return send(event) }
        // Read in place rather than bound to locals (checked just above): each binding was a
        // retain and a release per event (Benchmarks/server-callgrind.sh).
        guard owner != 0 else {
            ctx.direct?.append(consume event, of: self, slot: nil)
            return false
        }
        var claimed = false
        if !draining {
            draining = true
            drainOwner = owner
            batchSlot = ctx.direct?.claimSlot() ?? 0
            claimed = true
        }
        ctx.direct?.append(consume event, of: self, slot: batchSlot)
        return claimed
    }

    func sendStarted() -> Bool {
        outbox.append(.started(handle))
        return claimDrain()
    }

    private func claimDrain() -> Bool {
        if draining { return false }
        draining = true
        return true
    }

    /// The next step of the drain (see `ItemEngine.run`).
    func nextDrainStep() -> DrainStep {
        if closed || outbox.isEmpty {
            draining = false
            drainOwner = 0
            let w = waiters
            waiters = []
            return .finished(w)
        }
        let batch = outbox
        outbox = spare
        spare = []
        return .deliver(batch)
    }

    /// Nanoseconds between updates per item for the current frequency (nil: no limit).
    var interval: UInt64? {
        guard mode != .raw else { return nil }
        switch frequency {
        case .unlimited: return metadataLimit.map(nanosecondsPerEvent)
        case .unfiltered: return nil
        case .limited(let f): return nanosecondsPerEvent(min(f, metadataLimit ?? f))
        }
    }

    var grantedFrequency: GrantedFrequency {
        guard mode != .raw else { return .unlimited }
        switch frequency {
        case .unlimited: return metadataLimit.map { .limited($0) } ?? .unlimited
        case .unfiltered: return .unlimited
        case .limited(let f): return .limited(min(f, metadataLimit ?? f))
        }
    }
}

/// One step of a table's drain.
enum DrainStep {
    /// Deliver this batch, then come back.
    case deliver([Outgoing])
    /// Nothing more: the drain is released; resume these `unsubscribe` waiters.
    case finished([CheckedContinuation<Void, Never>])
}

/// Everything the engine guards with its lock.
struct EngineState: Sendable {
    var items: [ItemKey: ItemRecord] = [:]
    var tables: [UInt64: TableRecord] = [:]
    var upstreamTails: [ItemKey: UpstreamOp] = [:]
    /// Field schemas in use, so that rows are projected once per schema per event.
    var schemaIds: [[String]: (id: Int, users: Int)] = [:]
    var nextId: UInt64 = 0
    var isShutDown = false
    /// Update events received from the Data Adapters (the `MONITOR` adapter set's inbound rate).
    var updatesReceived = 0
    /// Events the last `TableMajorRound` listed (the next one reserves room for as many).
    var lastRoundEntries = 0
    /// Events per update that the last Data Adapter batch posted to one queue at most: the
    /// next batch's groups start with room for that many per update of theirs, up to
    /// `ItemEngine.eventsPerDrain` (growing from empty copied the events a dozen times; a
    /// fixed hint from a large batch would give a batch of one update a megabyte).
    var batchPostsPerUpdate = 0

    mutating func makeId() -> UInt64 {
        nextId += 1
        return nextId
    }

    mutating func retainSchema(_ fields: [String]) -> Int {
        if let entry = schemaIds[fields] {
            schemaIds[fields] = (entry.id, entry.users + 1)
            return entry.id
        }
        let id = Int(truncatingIfNeeded: makeId())
        schemaIds[fields] = (id, 1)
        return id
    }

    mutating func releaseSchema(_ fields: [String]) {
        guard let entry = schemaIds[fields] else { return }
        if entry.users <= 1 { schemaIds.removeValue(forKey: fields) } else { schemaIds[fields] = (entry.id, entry.users - 1) }
    }
}

/// What a locked section leaves for the caller to do once the lock is released.
struct Effects: Sendable {
    /// Tables this caller claimed and must drain.
    var drain: [TableRecord] = []
    /// Upstream unsubscriptions started.
    var upstream: [UpstreamOp] = []
}

/// Rows projected once per schema for one event (shared by every subscription with that schema).
struct ProjectionCache {
    /// The item whose event is being projected: it keeps the previous shared row per schema.
    let record: ItemRecord
    private var merged: [Int: SharedUpdateEncoding] = [:]
    /// The last MERGE row asked for: an item's subscribers almost all share one schema, and
    /// comparing an `Int` costs far less than hashing it.
    private var lastMerged: (schemaId: Int, encoding: SharedUpdateEncoding)?
    private var event: [Int: SharedUpdateEncoding] = [:]
    private var command: [Int: [String?]] = [:]
    /// The item's MERGE row as this event left it, when a later event of the same item was
    /// applied before this one was projected (`TableMajorRound`); nil: the item's current row.
    var row: ItemState.Fields?

    init(record: ItemRecord) {
        self.record = record
    }

    mutating func mergedRow(schemaId: Int, fields: [String]) -> [String?] {
        mergedShared(schemaId: schemaId, fields: fields).values
    }

    /// The MERGE row, as the encoding sessions may share (`SharedUpdateEncoding`), whose
    /// `values` it is.
    mutating func mergedShared(schemaId: Int, fields: [String]) -> SharedUpdateEncoding {
        if let last = lastMerged, last.schemaId == schemaId { return last.encoding }
        let r: SharedUpdateEncoding
        if let cached = merged[schemaId] {
            r = cached
        } else {
            r = shared(project(row ?? record.state.row, onto: fields), key: schemaId << 1)
            merged[schemaId] = r
        }
        lastMerged = (schemaId, r)
        return r
    }

    mutating func eventRow(_ values: [String: String?], schemaId: Int, fields: [String]) -> [String?] {
        eventShared(values, schemaId: schemaId, fields: fields).values
    }

    /// The DISTINCT/RAW row, as the encoding sessions may share.
    mutating func eventShared(_ values: [String: String?], schemaId: Int, fields: [String]) -> SharedUpdateEncoding {
        if let r = event[schemaId] { return r }
        let r = shared(project(values, onto: fields), key: schemaId << 1 | 1)
        event[schemaId] = r
        return r
    }

    mutating func commandRow(_ values: [String: String?], schemaId: Int, fields: [String]) -> [String?] {
        if let r = command[schemaId] { return r }
        let r = project(values, onto: fields)
        command[schemaId] = r
        return r
    }

    private func shared(_ row: [String?], key: Int) -> SharedUpdateEncoding {
        let encoding = SharedUpdateEncoding(previous: record.sharedRows[key], values: row)
        record.sharedRows[key] = row
        return encoding
    }
}
