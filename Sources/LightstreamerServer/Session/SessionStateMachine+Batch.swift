import TLCP

extension SessionStateMachine {
    /// Several engine events at once, in order: the same actions as calling `tableEvent` for
    /// each, except that consecutive writes to one connection come out as one `write` (one
    /// socket write for a burst of updates).
    public mutating func tableEvents(_ events: [(subscriptionId: Int, event: TableEvent)], now: Int64) -> [SessionAction] {
        // One output for the whole batch (`Output.write` merges consecutive writes), not an
        // action array per event.
        inBatch = true
        for (id, event) in events { handleTableEvent(id, event, now: now) }
        endBatch(now: now)
        return output.take()
    }

    /// `tableEvents(_:now:)` for events as the engine sent them (`EngineEvent`), which may
    /// carry the encoding their update shares with other sessions (`SharedUpdateEncoding`,
    /// used only where it applies to this session).
    mutating func tableEvents(
        _ events: consuming [(subscriptionId: Int, event: EngineEvent)], now: Int64
    ) -> [SessionAction] {
        // Moved out (`Array.moveOutInOrder`): no retain and release of each event's row and
        // encoding, which every session of the update shares.
        var events = events
        // The log is pruned once, after the batch (about 50 instructions per line).
        inBatch = true
        // The table of the previous event is looked up again only when the subscription
        // changes: hashing its id cost some 150 instructions per update
        // (Benchmarks/server-callgrind.sh), and a batch's events are mostly of one
        // subscription. The index stays valid through the batch: delivering an event never
        // adds or removes a table (closing the session keeps them, and ends the deliveries).
        var last: (id: Int, index: Dictionary<Int, SessionTable>.Index)?
        events.moveOutInOrder { entry in
            guard !isClosed else { return }
            let id = entry.subscriptionId
            let index: Dictionary<Int, SessionTable>.Index
            if let last, last.id == id {
                index = last.index
            } else {
                guard let found = tables.index(forKey: id) else { return }
                index = found
                last = (id, found)
            }
            handleEngineEvent(at: index, id, entry.event, now: now)
        }
        endBatch(now: now)
        return output.take()
    }
}

extension SessionStateMachine {
    /// `tableEvents(_:now:)` for consecutive events of one subscription, as the engine queued
    /// them (`QueuedTableEvent`), moved out of `run`, which is left empty with its capacity:
    /// the session's loop hands them straight over when nothing waits in the session's inbox
    /// (`ServerSession.enqueueTableEvents`), without a round through it.
    /// Adds to `lost` the updates the events report lost (`OV`). The actions come as an
    /// `ActionList`: mostly one write, without an array.
    mutating func tableEvents(
        subscriptionId id: Int, run: inout [QueuedTableEvent], lost: inout Int, now: Int64
    ) -> ActionList {
        guard !isClosed, let index = tables.index(forKey: id) else {
            run.removeAll(keepingCapacity: true)
            return ActionList([])
        }
        inBatch = true
        run.moveOutInOrder { queued in
            guard !isClosed else { return }
            lost &+= queued.handle(by: &self, at: index, subscriptionId: id, now: now)
        }
        endBatch(now: now)
        return output.takeList()
    }
}

extension QueuedTableEvent {
    /// Hands the event and its encoding on to `machine`, moved (see `Array.moveOutInOrder`);
    /// returns the updates it reports lost (`OV`).
    consuming func handle(
        by machine: inout SessionStateMachine, at index: Dictionary<Int, SessionTable>.Index, subscriptionId id: Int,
        now: Int64
    ) -> Int {
        let lost = payload.lostUpdates
        machine.handleEngineEvent(at: index, id, payload, now: now)
        return lost
    }
}

extension SessionStateMachine {
    /// One engine event for the table at `index` (see `handleTableEvent(at:…)`).
    @inline(__always)
    mutating func handleEngineEvent(
        at index: Dictionary<Int, SessionTable>.Index, _ id: Int, _ event: consuming EngineEvent, now: Int64
    ) {
        switch consume event {
        case .event(let event, let shared):
            handleTableEvent(at: index, id, event, shared: shared, now: now)
        case .shared(let item, let isSnapshot, let encoding):
            handleSharedUpdate(at: index, id, item: item, isSnapshot: isSnapshot, encoding, now: now)
        }
    }
}

extension SessionStateMachine {
    /// In-place access to one table (nil if there is none). Reading through `tables[id]?.x`
    /// copies the whole table first, which costs a retain and release per field on the
    /// per-update path, and makes the next write to its `rows` copy them.
    mutating func withTable<R>(_ id: Int, _ body: (inout SessionTable) -> R) -> R? {
        guard let i = tables.index(forKey: id) else { return nil }
        return body(&tables.values[i])
    }

    /// `withTable` for an index already looked up (valid while `tables` is not changed).
    mutating func withTable<R>(at index: Dictionary<Int, SessionTable>.Index, _ body: (inout SessionTable) -> R) -> R {
        body(&tables.values[index])
    }
}
