/// Routing of upstream item events to the subscriptions that use the item. Runs under the
/// engine's lock: it only updates records and queues events; sinks are called afterwards by
/// whoever claimed the drain of a table. The item's state is updated once per event and the
/// rows are projected once per field schema (`ProjectionCache`), whatever the number of
/// subscriptions.

/// Time and timer plumbing for one locked section.
struct DispatchContext {
    let now: UInt64
    let clock: any EngineClock
    /// Most updates one item of one subscription may hold waiting (safety cap).
    let cap: Int
    /// Called by gate timers: (table id, 0-based item position).
    let onTimer: @Sendable (UInt64, Int) -> Void
    /// Engine-wide counts kept under the engine's lock.
    let tally: EngineTally
    /// Where events go that need no drain (see `TableRecord.send(_:shared:ctx:)`); nil: every
    /// event goes through its table's outbox.
    var direct: DirectPosts? = nil

    /// Posts the direct events; call before unlocking. Returns the queues to flush afterwards.
    func postDirect() -> [any TableEventQueue] {
        direct?.posts.post() ?? []
    }
}

/// Counts the engine keeps for the `MONITOR` adapter set; touched only under the engine's lock.
final class EngineTally: @unchecked Sendable {
    /// Updates replaced or dropped by frequency limits (`DeliveryGate.filtered`).
    var filtered = 0
}

extension EngineState {
    /// An update from the Data Adapter. Returns the number of subscribed positions it went
    /// to (what it may have sent, at most one event each).
    @discardableResult
    func itemUpdate(
        _ key: ItemKey, fields: [String: String?], isSnapshot: Bool, ctx: DispatchContext,
        effects: inout Effects
    ) -> Int {
        guard let rec = items[key] else { return 0 }
        let inSnapshot = isSnapshot && !rec.state.snapshotComplete
        if !inSnapshot && !rec.state.snapshotComplete {
            // A live event ends the adapter's snapshot.
            completeSnapshot(rec, ctx: ctx, effects: &effects)
        }
        let change = rec.state.apply(fields)
        let state = rec.state
        var cache = ProjectionCache(record: rec)
        // Read in place, by index, from a local copy of the array (one retain of its storage):
        // `for subscriber in subscribers` copied each subscriber, a retain and a release of its
        // table per session and update (Benchmarks/server-callgrind.sh).
        let subscribers = rec.subscribers
        var visited = 0
        for i in subscribers.indices {
            var pos = subscribers[i].first
            var next = 0
            while true {
                visited &+= 1
                // Called on an unretained reference: the local copy of the array holds every
                // table through the loop, and calling a method on the array's element retained
                // and released the table per session (Benchmarks/server-callgrind.sh).
                let claim = Unmanaged.passUnretained(subscribers[i].table)._withUnsafeGuaranteedRef { table in
                    inSnapshot
                        ? table.snapshotEvent(pos: pos, state: state, cache: &cache, ctx: ctx)
                        : table.dispatchLive(pos: pos, fields: fields, change: change, cache: &cache, ctx: ctx)
                }
                if claim { effects.drain.append(subscribers[i].table) }
                // Further positions of the item in the same subscription (rare).
                guard next < subscribers[i].more.count else { break }
                pos = subscribers[i].more[next]
                next &+= 1
            }
        }
        return visited
    }

    /// The Data Adapter finished the snapshot of an item.
    func itemEndOfSnapshot(_ key: ItemKey, ctx: DispatchContext, effects: inout Effects) {
        guard let rec = items[key], !rec.state.snapshotComplete else { return }
        completeSnapshot(rec, ctx: ctx, effects: &effects)
    }

    /// The Data Adapter cleared an item.
    func itemClear(_ key: ItemKey, ctx: DispatchContext, effects: inout Effects) {
        guard let rec = items[key] else { return }
        rec.state.clear()
        let state = rec.state
        var cache = ProjectionCache(record: rec)
        for subscriber in rec.subscribers {
            for pos in subscriber.positions where subscriber.table.clear(pos: pos, state: state, cache: &cache, ctx: ctx) {
                effects.drain.append(subscriber.table)
            }
        }
    }

    /// Serves the snapshot to every subscription that was waiting for the adapter's one.
    private func completeSnapshot(_ rec: ItemRecord, ctx: DispatchContext, effects: inout Effects) {
        rec.state.snapshotComplete = true
        let state = rec.state
        for subscriber in rec.subscribers {
            let table = subscriber.table
            for pos in subscriber.positions where table.waitingForSnapshot[pos] {
                if table.serveSnapshot(pos: pos, state: state, ctx: ctx) { effects.drain.append(table) }
            }
        }
    }

    /// A frequency-limit timer of one table item fired.
    func gateTimerFired(table tid: UInt64, pos: Int, ctx: DispatchContext, effects: inout Effects) {
        guard let table = tables[tid] else { return }
        if table.releaseOne(pos: pos, ctx: ctx) { effects.drain.append(table) }
    }
}

extension TableRecord {
    typealias Pending = DeliveryGate.Pending

    /// A live event for the item at `pos`. Returns true when the caller must drain.
    func dispatchLive(
        pos: Int, fields eventFields: [String: String?],
        change: ItemState.CommandChange?, cache: inout ProjectionCache, ctx: DispatchContext
    ) -> Bool {
        guard !closed, pos < itemCount, !waitingForSnapshot[pos] else { return false }
        switch mode {
        // MERGE, DISTINCT and RAW rows go as the shared encoding alone (`EngineEvent.shared`),
        // unless a frequency limit holds them in the item's gate.
        case .raw:
            let shared = cache.eventShared(eventFields, schemaId: schemaId, fields: fields)
            guard selector?.matches(shared.values) ?? true else { return false }
            return sendShared(item: pos + 1, isSnapshot: false, shared, ctx: ctx)
        case .merge:
            let shared = cache.mergedShared(schemaId: schemaId, fields: fields)
            guard selector?.matches(shared.values) ?? true else { return false }
            if firstIsSnapshot[pos] {
                guard pos < items.count else { return false }
                firstIsSnapshot[pos] = false
                items[pos].gate.lastDelivery = ctx.now
                return sendShared(item: pos + 1, isSnapshot: true, shared, ctx: ctx)
            }
            if gatesOpen { return sendShared(item: pos + 1, isSnapshot: false, shared, ctx: ctx) }
            return offer(pos: pos, Pending(values: shared.values), shared: shared, ctx: ctx)
        case .distinct:
            let shared = cache.eventShared(eventFields, schemaId: schemaId, fields: fields)
            guard selector?.matches(shared.values) ?? true else { return false }
            if gatesOpen { return sendShared(item: pos + 1, isSnapshot: false, shared, ctx: ctx) }
            return offer(pos: pos, Pending(values: shared.values), shared: shared, ctx: ctx)
        case .command:
            guard let change else { return false }
            let values = cache.commandRow(change.row, schemaId: schemaId, fields: fields)
            guard let (shown, op) = filterCommand(pos: pos, change: change, values: values) else { return false }
            return offer(pos: pos, Pending(values: shown, key: change.key, op: op), ctx: ctx)
        }
    }

    /// A snapshot event from the adapter (item snapshot still open). Only MERGE subscriptions
    /// that asked for the snapshot see it: the first one serves their snapshot, later ones are
    /// updates on top of it.
    func snapshotEvent(pos: Int, state: ItemState, cache: inout ProjectionCache, ctx: DispatchContext) -> Bool {
        guard !closed, mode == .merge, pos < items.count, items[pos].wantsSnapshot else { return false }
        if waitingForSnapshot[pos] { return serveSnapshot(pos: pos, state: state, ctx: ctx) }
        return dispatchLive(pos: pos, fields: [:], change: nil, cache: &cache, ctx: ctx)
    }

    /// Sends the item's snapshot as this subscription asked for it.
    func serveSnapshot(pos: Int, state: ItemState, ctx: DispatchContext) -> Bool {
        guard !closed, pos < items.count else { return false }
        waitingForSnapshot[pos] = false
        var events: [TableEvent] = []
        let item = pos + 1
        switch mode {
        case .raw:
            break
        case .merge:
            let values = project(state.row, onto: fields)
            if state.hasRow && (selector?.matches(values) ?? true) {
                events.append(.update(item: item, values: values, isSnapshot: true))
            } else {
                firstIsSnapshot[pos] = true
            }
        case .distinct:
            for event in state.distinctSnapshot(length: items[pos].snapshotLength) {
                let values = project(event, onto: fields)
                if selector?.matches(values) ?? true { events.append(.update(item: item, values: values, isSnapshot: true)) }
            }
            events.append(.endOfSnapshot(item: item))
        case .command:
            for (key, row) in state.commandSnapshot {
                let values = project(row, onto: fields)
                if let selector {
                    guard selector.matches(values) else { continue }
                    items[pos].visibleKeys.insert(key)
                }
                events.append(.update(item: item, values: values, isSnapshot: true))
            }
            events.append(.endOfSnapshot(item: item))
        }
        if !events.isEmpty { items[pos].gate.lastDelivery = ctx.now }
        return send(events)
    }

    /// The adapter cleared the item: MERGE gets a row of nulls, DISTINCT/COMMAND a CS.
    func clear(pos: Int, state: ItemState, cache: inout ProjectionCache, ctx: DispatchContext) -> Bool {
        guard !closed, pos < items.count, !waitingForSnapshot[pos] else { return false }
        switch mode {
        case .raw:
            return false
        case .merge:
            guard state.hasRow, !firstIsSnapshot[pos] else { return false }
            return offer(pos: pos, Pending(values: cache.mergedRow(schemaId: schemaId, fields: fields)), ctx: ctx)
        case .distinct, .command:
            items[pos].gate.reset()
            items[pos].visibleKeys.removeAll()
            return send(.clearSnapshot(item: pos + 1))
        }
    }

    /// A gate timer: one waiting update leaves (after an OV if some were lost).
    func releaseOne(pos: Int, ctx: DispatchContext) -> Bool {
        guard !closed, pos < items.count else { return false }
        let (lost, update, rearmAt) = items[pos].gate.release(now: ctx.now)
        var events: [TableEvent] = []
        if lost > 0 { events.append(.overflow(item: pos + 1, lost: lost)) }
        if let update { events.append(.update(item: pos + 1, values: update.values, isSnapshot: false)) }
        if let rearmAt { armTimer(pos: pos, at: rearmAt, ctx: ctx) }
        return send(events)
    }

    /// New frequency: every item's gate follows it (waiting updates flush when the limit goes).
    func applyFrequency(ctx: DispatchContext) -> Bool {
        let newInterval = interval
        gatesOpen = newInterval == nil
        var events: [TableEvent] = []
        for pos in items.indices {
            items[pos].gate.interval = newInterval
            if newInterval == nil {
                let (lost, updates) = items[pos].gate.flush()
                if lost > 0 { events.append(.overflow(item: pos + 1, lost: lost)) }
                for u in updates { events.append(.update(item: pos + 1, values: u.values, isSnapshot: false)) }
            } else if let newInterval, !items[pos].gate.pending.isEmpty {
                items[pos].gate.timer?.cancel()
                items[pos].gate.timer = nil
                let at = max(ctx.now, (items[pos].gate.lastDelivery ?? 0) &+ newInterval)
                armTimer(pos: pos, at: at, ctx: ctx)
            }
        }
        return send(events)
    }

    /// Stops every timer (end of the subscription).
    func stopGates() {
        for pos in items.indices { items[pos].gate.reset() }
    }

    // MARK: helpers

    private func offer(pos: Int, _ update: Pending, shared: SharedUpdateEncoding? = nil, ctx: DispatchContext) -> Bool {
        // No frequency limit: the gate would deliver at once and count nothing (about 60
        // instructions per update through it, Benchmarks/server-callgrind.sh).
        if gatesOpen {
            return send(.update(item: pos + 1, values: update.values, isSnapshot: false), shared: shared, ctx: ctx)
        }
        guard pos < items.count else { return false }
        let outcome = items[pos].gate.offer(update, mode: mode, now: ctx.now, cap: ctx.cap)
        ctx.tally.filtered &+= items[pos].gate.takeFiltered()
        switch outcome {
        case .deliver(let p):
            // `shared` checks that it was made for `p.values` before a session uses it.
            return send(.update(item: pos + 1, values: p.values, isSnapshot: false), shared: shared, ctx: ctx)
        case .queued(let deadline):
            armTimer(pos: pos, at: deadline, ctx: ctx)
            return false
        }
    }

    private func armTimer(pos: Int, at deadline: UInt64, ctx: DispatchContext) {
        guard items[pos].gate.timer == nil else { return }
        let id = handle.id
        let fire = ctx.onTimer
        items[pos].gate.timer = ctx.clock.schedule(at: deadline) { fire(id, pos) }
    }

    private func send(_ events: [TableEvent]) -> Bool {
        var claim = false
        for e in events where send(e) { claim = true }
        return claim
    }

    /// COMMAND with a selector: a key appears (ADD) when its row starts matching and
    /// disappears (DELETE) when it stops. Returns the row to send and its command, or nil.
    private func filterCommand(pos: Int, change: ItemState.CommandChange, values: [String?]) -> ([String?], CommandOp)? {
        guard let selector else { return (values, change.op) }
        guard pos < items.count else { return nil }
        let visible = items[pos].visibleKeys.contains(change.key)
        switch change.op {
        case .delete:
            guard visible else { return nil }
            items[pos].visibleKeys.remove(change.key)
            return (values, .delete)
        case .add, .update:
            if selector.matches(values) {
                if visible { return (values, .update) }
                items[pos].visibleKeys.insert(change.key)
                var shown = values
                if let c = commandIndex, c < shown.count { shown[c] = CommandOp.add.rawValue }
                return (shown, .add)
            }
            guard visible else { return nil }
            items[pos].visibleKeys.remove(change.key)
            return (project(ItemState.deleteRow(key: change.key), onto: fields), .delete)
        }
    }
}
