import Logging
import NIOConcurrencyHelpers

/// The item engine: one upstream Data Adapter subscription per (adapter set, data adapter,
/// item), shared state per item, and per-subscription delivery (snapshot, frequency limit,
/// buffer, selector, OV) to the sessions' `TableSink`s.
///
/// ## Concurrency design
/// All engine state (`EngineState`: items, tables, upstream call chains) is one value behind
/// one `NIOLockedValueBox`. Every entry point (adapter events, timers, subscribe/unsubscribe,
/// reconf) takes the lock briefly, updates records and queues the resulting events in each
/// affected table's outbox, and never calls foreign code (sinks, adapters, metadata) while
/// holding it. Sinks are then called *outside* the lock by a per-table drain: the first thread
/// that queues into an idle table becomes its drainer and delivers batches until the outbox is
/// empty, so a sink is called serially and in queue order while other threads keep queueing.
/// `unsubscribe` marks the table closed and waits (suspending, not blocking) for a running
/// drain to finish, so no event reaches the sink after it returns. Data Adapter
/// `subscribe`/`unsubscribe` calls run in tasks chained per item, so they never overlap for
/// one item. Nothing blocks an event-loop thread beyond the lock's short critical sections.
///
/// Conventions: COMMAND items carry their key and command in adapter fields named `key` and
/// `command`; selectors follow the syntax of `ItemSelector` (docs/CONFIG.md). A subscription
/// waits for the Data Adapter's `subscribe` of its new items before it starts.
public final class ItemEngine: Sendable {
    let adapterSets: [String: AdapterSet]
    /// Whether some adapter set's Metadata Adapter reads the HTTP headers in `notifyUser`; if
    /// none does, WebSockets do not keep their upgrade headers.
    let readsHTTPHeaders: Bool
    let store = NIOLockedValueBox(EngineState())
    /// Counts touched under `store`'s lock only.
    let tally = EngineTally()
    let clock: any EngineClock
    let logger: Logger
    /// Safety cap on waiting updates per item per subscription.
    let queueCap: Int

    /// An engine serving `adapterSets`.
    ///
    /// - Parameters:
    ///   - adapterSets: the adapter sets to serve, by name (of two sets with one name, the first
    ///     is kept). Each Data Adapter is given its listener here.
    ///   - logger: where the engine logs.
    ///   - clock: time source for frequency limits (inject `ManualEngineClock` in tests).
    ///   - maxQueuedUpdatesPerItem: safety cap on the updates one item of one subscription may
    ///     hold while a frequency limit delays them, whatever the requested buffer.
    public init(
        adapterSets: [AdapterSet], logger: Logger = Logger(label: "lightstreamer.items"),
        clock: any EngineClock = SystemEngineClock(), maxQueuedUpdatesPerItem: Int = 10_000
    ) {
        var sets: [String: AdapterSet] = [:]
        for set in adapterSets where sets[set.name] == nil { sets[set.name] = set }
        self.adapterSets = sets
        self.readsHTTPHeaders = sets.values.contains { $0.metadata.readsHTTPHeaders }
        self.clock = clock
        self.logger = logger
        self.queueCap = max(1, maxQueuedUpdatesPerItem)
        for set in sets.values {
            for (name, adapter) in set.dataAdapters {
                adapter.setListener(EngineListener(engine: self, adapterSet: set.name, dataAdapter: name))
            }
        }
    }

    /// The adapter set for `LS_adapter_set` (nil if not configured).
    public func adapterSet(named name: String) -> AdapterSet? {
        adapterSets[name]
    }

    /// Starts one subscription. Events go to `sink` serially, in order, preceded by one
    /// `sink.started(handle)`. `user` is the session's user, passed to the Metadata Adapter's
    /// per-user checks. Throws with the protocol code: 17 bad data adapter (or adapter set),
    /// 24 mode not allowed, 25 bad selector, 15/16 COMMAND schema without key/command, 26
    /// unfiltered not allowed, 21/23 empty group/schema, or the Data Adapter's refusal (21 for
    /// `DataAdapterError.subscription`, 68 for other failures).
    public func subscribe(_ spec: TableSpec, sink: any TableSink, user: String? = nil) async throws(ItemEngineError) -> TableHandle {
        if store.withLockedValue({ $0.isShutDown }) { throw .shutDown }
        let plan = try await TablePlan(spec: spec, user: user, engine: self)
        let keys = plan.distinctItems.map { ItemKey(adapterSet: spec.adapterSet, dataAdapter: spec.dataAdapter, item: $0) }
        let reserved = acquireUpstream(keys: keys, plan: plan)
        for r in reserved {
            guard let task = r.subscribeTask else { continue }
            if case .failure(let error) = await task.value {
                releaseReservations(Array(zip(keys, reserved.map(\.generation))))
                throw error
            }
        }
        let generations = Dictionary(zip(keys.map(\.item), reserved.map(\.generation)), uniquingKeysWith: { a, _ in a })
        let result = commitTable(plan: plan, sink: sink, generations: generations)
        switch result {
        case .success(let (handle, effects)):
            run(effects)
            return handle
        case .failure(let error):
            releaseReservations(Array(zip(keys, reserved.map(\.generation))))
            throw error
        }
    }

    /// Ends a subscription. After it returns no more events reach that table's sink; the
    /// upstream subscription of an item ends (and is awaited) when its last table goes.
    public func unsubscribe(_ handle: TableHandle) async {
        let (removed, effects) = store.withLockedValue { s -> (TableRecord?, Effects) in
            guard let table = s.tables.removeValue(forKey: handle.id) else { return (nil, Effects()) }
            var effects = Effects()
            table.closed = true
            table.outbox.removeAll()
            table.stopGates()
            s.releaseSchema(table.fields)
            for key in Set(table.items.map(\.key)) {
                s.items[key]?.removeSubscriber(id: handle.id)
                if let op = releaseIfUnused(&s, key) { effects.upstream.append(op) }
            }
            return (table, effects)
        }
        if let table = removed {
            // A drain may be delivering right now: wait for it to notice the table is closed.
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = store.withLockedValue { _ -> Bool in
                    guard table.draining else { return true }
                    table.waiters.append(c)
                    return false
                }
                if resumeNow { c.resume() }
            }
            // Events drains posted to a shared queue reach the sink before this returns.
            table.queue?.flush()
        }
        for op in effects.upstream { await op.wait() }
    }

    /// `reconf`: a new maximum frequency (code 13 if the subscription is unfiltered, 19 if
    /// unknown, 65 when asking for `unfiltered`). Takes effect before the next update: waiting
    /// updates are rescheduled at the new rate, or flushed when the limit is lifted.
    public func setMaxFrequency(_ handle: TableHandle, _ frequency: RequestedFrequency) async throws(ItemEngineError) {
        let ctx = dispatchContext()
        let result = store.withLockedValue { s -> Result<Effects, ItemEngineError> in
            guard let table = s.tables[handle.id], !table.closed else { return .failure(.subscriptionNotFound) }
            if table.frequency == .unfiltered { return .failure(.reconfUnfiltered) }
            if frequency == .unfiltered { return .failure(ItemEngineError(code: 65, message: "Cannot switch to unfiltered")) }
            var effects = Effects()
            table.frequency = frequency
            if table.applyFrequency(ctx: ctx) { effects.drain.append(table) }
            return .success(effects)
        }
        run(try result.get())
    }

    /// The frequency granted to a subscription (for `CONF`): the requested one clamped by the
    /// Metadata Adapter; `unlimited` for RAW, unfiltered and unknown handles.
    public func grantedFrequency(of handle: TableHandle) -> GrantedFrequency {
        store.withLockedValue { $0.tables[handle.id]?.grantedFrequency } ?? .unlimited
    }

    /// Number of upstream items currently subscribed (or being subscribed) to Data Adapters.
    public var upstreamItemCount: Int {
        store.withLockedValue { $0.items.count }
    }

    /// Updates replaced or dropped by frequency limits since start (`DeliveryGate.filtered`).
    public var updatesFiltered: Int {
        store.withLockedValue { _ in tally.filtered }
    }

    /// Update events received from the Data Adapters since start.
    public var updatesReceived: Int {
        store.withLockedValue { $0.updatesReceived }
    }

    /// Number of running subscriptions.
    public var tableCount: Int {
        store.withLockedValue { $0.tables.count }
    }

    /// Ends every subscription (no more events) and every upstream subscription; later
    /// `subscribe` calls fail with code 68.
    public func shutdown() async {
        let ops = store.withLockedValue { s -> [UpstreamOp] in
            s.isShutDown = true
            for table in s.tables.values {
                table.closed = true
                table.outbox.removeAll()
                table.stopGates()
            }
            s.tables.removeAll()
            s.schemaIds.removeAll()
            var ops: [UpstreamOp] = []
            for (key, rec) in s.items {
                rec.reservations = 0
                rec.removeAllSubscribers()
                if let op = releaseIfUnused(&s, key) { ops.append(op) }
            }
            return ops
        }
        for op in ops { await op.wait() }
    }

    // MARK: - Adapter events (from EngineListener)

    func adapterUpdate(_ key: ItemKey, fields: [String: String?], isSnapshot: Bool) {
        dispatch(direct: true) { s, ctx, e in
            s.updatesReceived &+= 1
            s.itemUpdate(key, fields: fields, isSnapshot: isSnapshot, ctx: ctx, effects: &e)
        }
    }

    /// A batch of updates from one Data Adapter, handed to the event loops together: each
    /// loop gets its sessions' events of the batch in posts where each session's events are
    /// together, so it runs each session's batch, and writes, once.
    ///
    /// Updates of items whose snapshot is complete (all of them once subscriptions are
    /// running) go table by table (`TableMajorRound`): a round of up to `eventsPerDrain`
    /// events in one locked section, posted every `eventsPerPost` events, so the loops start
    /// writing while the round goes on. A round holds the engine's lock throughout (nothing
    /// else may change its items or tables between its two passes): about 9 ms for a tick of
    /// 50,000 events on this project's machine. The others (snapshots) go item by item, as
    /// follows.
    ///
    /// Item by item, the events wait in the batch's own posts (`DirectPosts` with an owner):
    /// the batch holds the drain of every table it sends to until it has posted them, so an
    /// event another thread sends to one of those tables meanwhile waits in the table's outbox
    /// and goes out after them (`TableRecord.send(_:shared:ctx:)`). Two bounds: the engine's
    /// lock is released after each `eventsPerSection` events (subscriptions and timers wait for
    /// it), and the events held are posted once `eventsPerDrain` of them wait (memory, and the
    /// wait of the batch's first events).
    ///
    /// Events went through the tables' outboxes before, and then from the outboxes to the
    /// posts: about 200 more instructions per update (BENCHMARKS.md, "Batches posted
    /// without the outboxes").
    func adapterUpdates(_ batch: [ItemUpdateEvent], adapterSet: String, dataAdapter: String) {
        var next = batch.startIndex
        var effects = Effects()
        var held = 0
        let direct = DirectPosts()
        while next < batch.endIndex {
            let ctx = dispatchContext(direct: direct)
            // What the section did: a table-major round (its posts made, the queues it filled
            // to flush), or item by item (and whether it stopped before a table-major update).
            var roundFull: [any TableEventQueue]?
            var beforeRound = false
            store.withLockedValue { s in
                if direct.owner == 0 {
                    direct.owner = s.makeId()
                    // Both factors bounded (a post holds at most some 70 K events), so the
                    // product cannot overflow.
                    let updates = min(batch.count, Self.eventsPerDrain)
                    direct.posts.reserveHint = min(s.batchPostsPerUpdate * updates, Self.eventsPerDrain)
                }
                if held == 0, s.takesTableMajor(Self.key(batch[next], adapterSet, dataAdapter)) {
                    let r = s.fanOutTableMajor(
                        batch, from: next, adapterSet: adapterSet, dataAdapter: dataAdapter,
                        maxEntries: Self.eventsPerDrain, eventsPerPost: Self.eventsPerPost, direct: direct, ctx: ctx,
                        effects: &effects)
                    next = r.next
                    roundFull = r.full
                    return
                }
                var sent = 0
                while next < batch.endIndex, sent < Self.eventsPerSection {
                    let u = batch[next]
                    let key = Self.key(u, adapterSet, dataAdapter)
                    if held &+ sent > 0, s.takesTableMajor(key) {
                        beforeRound = true
                        break
                    }
                    next += 1
                    s.updatesReceived &+= 1
                    sent &+= s.itemUpdate(key, fields: u.fields, isSnapshot: u.isSnapshot, ctx: ctx, effects: &effects)
                }
                held &+= sent
            }
            if let full = roundFull {
                for queue in full { queue.flush() }
                run(effects)
                effects = Effects()
            } else if held >= Self.eventsPerDrain || beforeRound {
                postAndRun(direct, effects)
                effects = Effects()
                held = 0
            }
        }
        postAndRun(direct, effects)
        guard !batch.isEmpty else { return }
        let perUpdate = (direct.posts.largestPosted + batch.count - 1) / batch.count
        store.withLockedValue { $0.batchPostsPerUpdate = perUpdate }
    }

    private static func key(_ update: ItemUpdateEvent, _ adapterSet: String, _ dataAdapter: String) -> ItemKey {
        ItemKey(adapterSet: adapterSet, dataAdapter: dataAdapter, item: update.item)
    }

    /// Posts a batch's events, then drains the tables it claimed (which releases their drains,
    /// and delivers what other threads queued in their outboxes meanwhile, after the posts).
    private func postAndRun(_ direct: DirectPosts, _ effects: Effects) {
        for queue in direct.post() { queue.flush() }
        run(effects)
    }

    /// See `adapterUpdates`: about 3 ms of fan-out on this project's machine.
    static let eventsPerSection = 4_096
    /// See `adapterUpdates`: a tick of the load test at 5,000 sessions (50,000 events) is
    /// delivered in one round, so each session gets its events of the tick together and
    /// writes once. With 16,384, such a tick went out in four posts: the loop, still on the
    /// first when the third came, left the rest to the producer, which moved them into the
    /// sessions' inboxes while the loop ran them, and sessions wrote up to once per post:
    /// 2.15–2.26 µs of CPU per update against 1.65–1.70, and 66–69 K writes per second
    /// against 50 K (BENCHMARKS.md, "One post per tick at 5,000 sessions"). A post holds at
    /// most this plus a section's events: some 3.5 MB at 48 bytes an event, twice that while
    /// `QueuedPosts.grouped` orders them.
    static let eventsPerDrain = 65_536
    /// A `TableMajorRound` posts once this many events wait, at the next table boundary: at
    /// 1,000 sessions of ten items, a post for every hundred sessions or so, which the loops
    /// write while the round fans out to the next.
    static let eventsPerPost = 1_024

    func adapterEndOfSnapshot(_ key: ItemKey) {
        dispatch(direct: false) { s, ctx, e in s.itemEndOfSnapshot(key, ctx: ctx, effects: &e) }
    }

    func adapterClear(_ key: ItemKey) {
        dispatch(direct: true) { s, ctx, e in s.itemClear(key, ctx: ctx, effects: &e) }
    }

    private func gateTimerFired(table: UInt64, pos: Int) {
        dispatch(direct: false) { s, ctx, e in s.gateTimerFired(table: table, pos: pos, ctx: ctx, effects: &e) }
    }

    /// One locked section for an adapter event or a timer, then what it left to do: the
    /// queues it filled past their limit are flushed and the tables it claimed are drained,
    /// both after unlocking. `direct`: events may go straight to their sinks' queues.
    private func dispatch(direct: Bool, _ body: (inout EngineState, DispatchContext, inout Effects) -> Void) {
        let ctx = dispatchContext(direct: direct ? DirectPosts() : nil)
        let (effects, full) = store.withLockedValue { s -> (Effects, [any TableEventQueue]) in
            var e = Effects()
            body(&s, ctx, &e)
            return (e, ctx.postDirect())
        }
        for queue in full { queue.flush() }
        run(effects)
    }

    /// The context of one locked section. With `direct`, events of tables with nothing
    /// waiting go straight to their sinks' queues (`TableRecord.send(_:shared:ctx:)`), and
    /// the section must call `postDirect()` before it unlocks.
    func dispatchContext(direct: DirectPosts? = nil) -> DispatchContext {
        DispatchContext(
            now: clock.now(), clock: clock, cap: queueCap,
            onTimer: { [weak self] table, pos in
                self?.gateTimerFired(table: table, pos: pos)
            }, tally: tally, direct: direct)
    }

    // MARK: - Delivery

    /// Runs what a locked section left to do: drains the tables it claimed. All claimed tables
    /// are served together, one lock round per batch round (not per table), so a fan-out to N
    /// sinks costs a constant number of lock acquisitions; emptied batches go back to their
    /// table for reuse. (Upstream operations in `effects` run by themselves; only
    /// `unsubscribe`/`shutdown` wait for them.)
    func run(_ effects: Effects) {
        var claimed = effects.drain
        var delivered: [(TableRecord, [Outgoing])] = []
        while !claimed.isEmpty {
            let (batches, waiters) = store.withLockedValue { _ -> ([(TableRecord, [Outgoing])], [CheckedContinuation<Void, Never>]) in
                for (table, emptied) in delivered where table.spare.capacity < emptied.capacity {
                    table.spare = emptied
                }
                var batches: [(TableRecord, [Outgoing])] = []
                batches.reserveCapacity(claimed.count)
                var waiters: [CheckedContinuation<Void, Never>] = []
                for table in claimed {
                    switch table.nextDrainStep() {
                    case .deliver(let batch): batches.append((table, batch))
                    case .finished(let w): waiters.append(contentsOf: w)
                    }
                }
                return (batches, waiters)
            }
            for w in waiters { w.resume() }
            delivered = batches
            claimed.removeAll(keepingCapacity: true)
            var posts = QueuedPosts()
            for (table, batch) in delivered where table.queuedSink != nil {
                if let queue = table.queue { posts.plan(batch.count, for: queue) }
            }
            posts.reservePlanned()
            for i in delivered.indices {
                let (table, _) = delivered[i]
                let sink = table.sink
                let sharingSink = table.sharingSink
                let queuedSink = table.queuedSink
                let queue = table.queue
                // Moved out (`Array.moveOutInOrder`): each event's row and encoding go on to
                // the post without a retain and a release (a batch of updates sends all of its
                // events this way).
                delivered[i].1.moveOutInOrder { item in
                    if case .started(let handle) = item {
                        // First in its table's outbox: nothing of this table is posted yet.
                        sink.started(handle)
                        return
                    }
                    if let payload = item.takeEvent() {
                        if let queuedSink, let queue {
                            posts.append(QueuedTableEvent(sink: queuedSink, payload: payload), to: queue)
                            return
                        }
                        let (event, shared) = payload.split()
                        if let sharingSink {
                            sharingSink.deliver(event, shared: shared)
                        } else {
                            sink.deliver(event)
                        }
                    }
                }
                claimed.append(table)
            }
            // Before the next round can release a drain (and so an `unsubscribe` waiting on it).
            for queue in posts.post() { queue.flush() }
        }
    }
}
