import Logging

/// Upstream (Data Adapter) subscriptions: reference counting and the per-item call chain.
///
/// An `ItemRecord` exists while at least one subscription uses or reserves the item. The
/// first reservation creates it and starts the adapter's `subscribe`; later ones wait for the
/// same call. When the last user goes the record is removed at once (new events for the item
/// are ignored) and the adapter's `unsubscribe` runs after any call still in flight.
extension ItemEngine {
    struct Reservation {
        var generation: UInt64
        /// The adapter's `subscribe` to wait for (nil: it already succeeded).
        var subscribeTask: Task<Result<Void, ItemEngineError>, Never>?
    }

    func acquireUpstream(keys: [ItemKey], plan: TablePlan) -> [Reservation] {
        store.withLockedValue { s in
            keys.map { key in
                if let rec = s.items[key] {
                    rec.reservations += 1
                    if plan.mode == .distinct { rec.state.keepsHistory = true }
                    return Reservation(generation: rec.generation, subscribeTask: rec.subscribeSucceeded ? nil : rec.subscribeTask)
                }
                let generation = s.makeId()
                let opId = s.makeId()
                let previous = s.upstreamTails[key]
                let adapter = plan.adapter
                let task = Task<Result<Void, ItemEngineError>, Never> {
                    await self.upstreamSubscribe(key, generation: generation, opId: opId, after: previous, adapter: adapter)
                }
                let info = plan.itemInfo[key.item] ?? .init(snapshotAvailable: false, historyLimit: 0, distinctPossible: false)
                s.items[key] = ItemRecord(
                    generation: generation, adapter: adapter,
                    state: ItemState(
                        historyLimit: info.historyLimit, snapshotFromAdapter: info.snapshotAvailable,
                        keepsHistory: plan.mode == .distinct || info.distinctPossible),
                    subscribeTask: task, reservations: 1)
                s.upstreamTails[key] = UpstreamOp(id: opId) { _ = await task.value }
                return Reservation(generation: generation, subscribeTask: task)
            }
        }
    }

    private func upstreamSubscribe(
        _ key: ItemKey, generation: UInt64, opId: UInt64, after previous: UpstreamOp?,
        adapter: any DataAdapter
    ) async -> Result<Void, ItemEngineError> {
        await previous?.wait()
        let result: Result<Void, ItemEngineError>
        do {
            try await adapter.subscribe(item: key.item)
            result = .success(())
        } catch let error as DataAdapterError {
            switch error {
            case .subscription(let message):
                result = .failure(ItemEngineError(code: 21, message: "Item \(key.item) refused: \(message)"))
            case .failure(let message):
                result = .failure(ItemEngineError(code: 68, message: "Data Adapter failure on \(key.item): \(message)"))
            }
        } catch {
            result = .failure(ItemEngineError(code: 68, message: "Data Adapter failure on \(key.item): \(error)"))
        }
        store.withLockedValue { s in
            if let rec = s.items[key], rec.generation == generation {
                switch result {
                case .success: rec.subscribeSucceeded = true
                case .failure: s.items.removeValue(forKey: key)
                }
            }
            if s.upstreamTails[key]?.id == opId { s.upstreamTails.removeValue(forKey: key) }
        }
        if case .failure(let error) = result {
            logger.warning(
                "Data Adapter subscribe failed",
                metadata: [
                    "item": "\(String(describing: key).logEscaped())",
                    "error": "\(String(describing: error).logEscaped())",
                ])
        }
        return result
    }

    /// Drops reservations taken by a subscription that did not start.
    func releaseReservations(_ reservations: [(ItemKey, UInt64)]) {
        store.withLockedValue { s in
            for (key, generation) in reservations {
                guard let rec = s.items[key], rec.generation == generation else { continue }
                rec.reservations -= 1
                _ = releaseIfUnused(&s, key)
            }
        }
    }

    /// Removes the record of an item nobody uses any more and chains the adapter's
    /// `unsubscribe` (only if its `subscribe` succeeded). Call under the lock.
    func releaseIfUnused(_ s: inout EngineState, _ key: ItemKey) -> UpstreamOp? {
        guard let rec = s.items[key], rec.isUnused else { return nil }
        s.items.removeValue(forKey: key)
        let previous = s.upstreamTails[key]
        let opId = s.makeId()
        let subscribeTask = rec.subscribeTask
        let succeeded = rec.subscribeSucceeded
        let adapter = rec.adapter
        let task = Task {
            await previous?.wait()
            var subscribed = succeeded
            if !subscribed, let subscribeTask, case .success = await subscribeTask.value { subscribed = true }
            if subscribed { await adapter.unsubscribe(item: key.item) }
            self.store.withLockedValue { s in
                if s.upstreamTails[key]?.id == opId { s.upstreamTails.removeValue(forKey: key) }
            }
        }
        let op = UpstreamOp(id: opId) { await task.value }
        s.upstreamTails[key] = op
        return op
    }

    /// Registers a subscription whose items are all subscribed upstream, and queues `started`
    /// and the snapshots.
    func commitTable(
        plan: TablePlan, sink: any TableSink,
        generations: [String: UInt64]
    ) -> Result<(TableHandle, Effects), ItemEngineError> {
        let ctx = dispatchContext()
        return store.withLockedValue { s in
            if s.isShutDown { return .failure(.shutDown) }
            let keyOf = { (name: String) in ItemKey(adapterSet: plan.adapterSet, dataAdapter: plan.dataAdapter, item: name) }
            for name in plan.distinctItems {
                guard let rec = s.items[keyOf(name)], rec.generation == generations[name], rec.subscribeSucceeded else {
                    return .failure(ItemEngineError(code: 68, message: "Item \(name) is no longer available"))
                }
            }
            let id = s.makeId()
            let handle = TableHandle(
                id: id, mode: plan.mode, itemCount: plan.items.count, fieldCount: plan.fields.count,
                keyPosition: plan.keyIndex.map { $0 + 1 }, commandPosition: plan.commandIndex.map { $0 + 1 },
                isUnfiltered: plan.frequency == .unfiltered)
            let table = TableRecord(handle: handle, sink: sink, plan: plan, schemaId: s.retainSchema(plan.fields))
            let interval = table.interval
            table.items = plan.items.map { name in
                SubscribedItem(
                    key: keyOf(name), generation: generations[name] ?? 0, wantsSnapshot: plan.wantsSnapshot,
                    snapshotLength: plan.snapshotLength,
                    gate: DeliveryGate(interval: interval, bufferLimit: plan.bufferLimit, commandIndex: plan.commandIndex))
            }
            _ = table.sendStarted()
            s.tables[id] = table
            for (pos, name) in plan.items.enumerated() {
                s.items[keyOf(name)]?.addSubscriber(table, id: id, position: pos)
            }
            for name in plan.distinctItems { s.items[keyOf(name)]?.reservations -= 1 }
            if plan.wantsSnapshot {
                for (pos, name) in plan.items.enumerated() {
                    guard let state = s.items[keyOf(name)]?.state else { continue }
                    if state.snapshotComplete || (plan.mode == .merge && state.hasRow) {
                        _ = table.serveSnapshot(pos: pos, state: state, ctx: ctx)
                    } else {
                        table.waitingForSnapshot[pos] = true
                    }
                }
            }
            var effects = Effects()
            effects.drain.append(table)
            return .success((handle, effects))
        }
    }
}

/// The listener the engine gives each Data Adapter: events for (adapter set, data adapter).
final class EngineListener: ItemEventListener {
    private weak let engine: ItemEngine?
    private let adapterSet: String
    private let dataAdapter: String

    init(engine: ItemEngine, adapterSet: String, dataAdapter: String) {
        self.engine = engine
        self.adapterSet = adapterSet
        self.dataAdapter = dataAdapter
    }

    private func key(_ item: String) -> ItemKey {
        ItemKey(adapterSet: adapterSet, dataAdapter: dataAdapter, item: item)
    }

    func update(item: String, fields: [String: String?], isSnapshot: Bool) {
        engine?.adapterUpdate(key(item), fields: fields, isSnapshot: isSnapshot)
    }

    func update(_ batch: [ItemUpdateEvent]) {
        engine?.adapterUpdates(batch, adapterSet: adapterSet, dataAdapter: dataAdapter)
    }

    func endOfSnapshot(item: String) {
        engine?.adapterEndOfSnapshot(key(item))
    }

    func clearSnapshot(item: String) {
        engine?.adapterClear(key(item))
    }

    func failure(_ error: any Error) {
        engine?.logger.error(
            "Data Adapter failure",
            metadata: [
                "adapterSet": "\(adapterSet)", "dataAdapter": "\(dataAdapter)",
                "error": "\(String(describing: error).logEscaped())",
            ])
    }
}
