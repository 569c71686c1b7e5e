import LightstreamerServer
import Logging
import NIOConcurrencyHelpers
import TLCP

/// One MPN subscription as the engine runs it.
struct RunningSubscription: Sendable {
    var record: MPNSubscriptionRecord
    var format: NotificationFormat
    var trigger: CompiledTrigger?
    var handle: TableHandle?
    /// Events of older item subscriptions (before a reconf) carry an older generation.
    var generation: UInt64 = 0
}

extension MPNModule {
    enum Event: Sendable {
        case update(subscriptionId: String, generation: UInt64, item: Int, values: [String?], isSnapshot: Bool)
        case pacingTimer(deviceId: String)
        case sent(deviceId: String, notification: PendingNotification, result: MPNDeliveryResult)
        case outboxSent(entry: MPNOutboxEntry, attempts: Int, result: MPNDeliveryResult)
        case retryOutbox(entry: MPNOutboxEntry, attempts: Int)
        /// Commits the triggers fired by the events handled before it, in one transaction.
        case commitTriggers
        case moduleCheck
        case collect
        /// Reported by the store's change watch.
        case storeChange(MPNStoreChange)
        /// Reads the devices announced changed (or everything) and refreshes their items.
        case syncChanges
    }

    /// Feeds an event to the consumer task (from sinks, timers and send tasks).
    nonisolated func post(_ event: Event) {
        outstanding.withLockedValue { $0 += 1 }
        if case .terminated = eventSink.yield(event) { outstanding.withLockedValue { $0 -= 1 } }
    }

    func handle(_ event: Event) async {
        defer { outstanding.withLockedValue { $0 -= 1 } }
        switch event {
        case .update(let id, let generation, let item, let values, let isSnapshot):
            await handleUpdate(id, generation: generation, item: item, values: values, isSnapshot: isSnapshot)
        case .pacingTimer(let deviceId):
            queues[deviceId]?.timer = nil
            await pump(deviceId)
        case .sent(let deviceId, let notification, let result):
            await handleResult(deviceId, notification, result)
        case .outboxSent(let entry, let attempts, let result):
            await handleOutboxResult(entry, attempts: attempts, result)
        case .retryOutbox(let entry, let attempts):
            sendOutbox(entry, attempts: attempts)
        case .commitTriggers:
            await commitTriggers()
        case .moduleCheck:
            checkTimer = nil
            await checkModules()
            if started { scheduleModuleCheck() }
        case .collect:
            collectorTimer = nil
            await collectInactiveDevices()
            if started { scheduleCollector() }
        case .storeChange(let change):
            noteStoreChange(change)
        case .syncChanges:
            syncPosted = false
            await syncChanges()
        }
    }

    // MARK: - Subscriptions and item tables

    func prepare(_ r: MPNSubscriptionRecord) throws(MPNError) -> RunningSubscription {
        let platform = devices[r.deviceId]?.platform ?? .apple
        let format = try NotificationFormat(r.notificationFormat, fields: r.fields, platform: platform, limits: configuration.limits)
        let trigger = try r.trigger.map { (t: String) throws(MPNError) in try CompiledTrigger(t, fields: r.fields) }
        return RunningSubscription(record: r, format: format, trigger: trigger)
    }

    /// Installs a new or changed subscription: publishes it and (re)starts its items.
    func install(_ record: MPNSubscriptionRecord, format: NotificationFormat, trigger: CompiledTrigger?) async {
        await stopTable(record.id)
        forgetFiredTrigger(record.id)
        running[record.id] = RunningSubscription(record: record, format: format, trigger: trigger)
        queues[record.deviceId]?.pending.removeAll { $0.subscriptionId == record.id }
        internalAdapter.publish(subscription: record)
        if record.status == .active, devices[record.deviceId]?.status == .active { await startTable(record.id) }
    }

    func startTable(_ id: String) async {
        guard var r = running[id], r.handle == nil else { return }
        nextGeneration += 1
        r.generation = nextGeneration
        running[id] = r
        let rec = r.record
        let spec = TableSpec(
            adapterSet: rec.adapterSet, dataAdapter: rec.dataAdapter, mode: rec.mode, items: rec.items,
            fields: rec.fields, snapshot: rec.mode == .merge && r.trigger != nil ? .yes : .no,
            maxFrequency: rec.maxFrequency ?? .unlimited, bufferSize: rec.bufferSize)
        let sink = MPNTableSink(subscriptionId: id, generation: r.generation, module: self)
        do {
            let handle = try await itemEngine.subscribe(spec, sink: sink)
            if running[id]?.generation == r.generation {
                running[id]?.handle = handle
            } else {
                await itemEngine.unsubscribe(handle)
            }
        } catch {
            logger.error(
                "MPN subscription cannot subscribe its items",
                metadata: ["id": "\(id)", "error": "\(String(describing: error).logEscaped())"])
        }
    }

    func stopTable(_ id: String) async {
        guard let handle = running[id]?.handle else { return }
        running[id]?.handle = nil
        running[id]?.generation = 0
        await itemEngine.unsubscribe(handle)
    }

    // MARK: - Updates and triggers

    func handleUpdate(_ id: String, generation: UInt64, item: Int, values: [String?], isSnapshot: Bool) async {
        guard let r = running[id], r.generation == generation, r.record.status == .active,
            devices[r.record.deviceId]?.status == .active
        else { return }
        if let trigger = r.trigger {
            guard !firedTriggerIds.contains(id), trigger.evaluate(values) else { return }
            // Group commit: the triggers of the events already queued are committed together.
            if firedTriggers.isEmpty { post(.commitTriggers) }
            firedTriggerIds.insert(id)
            firedTriggers.append(PendingNotification(subscriptionId: id, item: item, values: values))
            return
        }
        guard !isSnapshot else { return }
        enqueue(
            PendingNotification(subscriptionId: id, item: item, values: values),
            deviceId: r.record.deviceId, mode: r.record.mode)
        await pump(r.record.deviceId)
    }

    /// A subscription changed or went away before its fired trigger was committed.
    func forgetFiredTrigger(_ id: String) {
        guard firedTriggerIds.remove(id) != nil else { return }
        firedTriggers.removeAll { $0.subscriptionId == id }
    }

    // MARK: - Devices

    func suspend(_ deviceId: String, reason: String) async {
        let now = nowMillis
        guard let d = try? await store.setDeviceStatus(id: deviceId, status: .suspended, now: now) else { return }
        logger.notice(
            "MPN device suspended by the provider",
            metadata: ["device": "\(deviceId)", "reason": "\(String(describing: reason).logEscaped())"])
        let wasActive = devices[deviceId]?.status == .active
        devices[deviceId] = d
        if wasActive { statistics.suspendedDevices += 1 }
        internalAdapter.publish(device: d)
        queues.removeValue(forKey: deviceId)?.timer?.cancel()
        for (id, r) in running where r.record.deviceId == deviceId { await stopTable(id) }
    }

    /// Deletes devices inactive for `inactivity.deviceInactivityTimeoutMinutes` (SUSPENDED, or
    /// without ACTIVE subscriptions). Runs every `collectorPeriodMinutes`; callable directly.
    @discardableResult
    public func collectInactiveDevices() async -> [String] {
        guard started else { return [] }
        let timeout = Saturating.multiply(Int64(max(0, configuration.inactivity.deviceInactivityTimeoutMinutes)), 60_000)
        let cutoff = Saturating.subtract(nowMillis, timeout)
        guard let ids = try? await store.collectInactiveDevices(lastAccessBefore: cutoff) else { return [] }
        for deviceId in ids {
            for (id, r) in running where r.record.deviceId == deviceId {
                await stopTable(id)
                running.removeValue(forKey: id)
            }
            devices.removeValue(forKey: deviceId)
            queues.removeValue(forKey: deviceId)?.timer?.cancel()
            internalAdapter.remove(deviceId: deviceId)
        }
        return ids
    }

    // MARK: - Cluster

    /// Owners silent since before this are dead; an embedded store has no other owner.
    var orphanCutoff: MPNTimestamp {
        store.isShared ? Saturating.subtract(nowMillis, Int64(max(0, configuration.moduleTimeoutMillis))) : .max
    }

    func scheduleModuleCheck() {
        let period = max(100, configuration.moduleCheckPeriodMillis)
        checkTimer = clock.schedule(afterNanoseconds: MPNRetryDelay.nanoseconds(Int64(period))) { [weak self] in self?.post(.moduleCheck) }
    }

    /// Records this instance alive, takes over the devices of dead instances and lets go of
    /// those another instance took (registered through it). Callable directly (tests).
    public func checkModules() async {
        // A stopped instance must not record itself alive again, nor claim devices: the others
        // take its devices over at once after its clean stop.
        guard started else { return }
        do {
            do {
                try await store.heartbeat(moduleId: moduleId, now: nowMillis)
                healthReporter?(nil)
            } catch {
                healthReporter?("store unreachable: \(String(describing: error).prefix(200))")
                throw error
            }
            // Stopped meanwhile: the heartbeat may have landed after the stop removed this
            // instance, which would then look alive to the others until it timed out.
            guard started else {
                try? await store.removeModule(moduleId: moduleId)
                return
            }
            let now = try await store.claimOrphanedDevices(moduleId: moduleId, silentBefore: orphanCutoff)
            // Devices claimed after the stop belong to an instance that left: the others take
            // them over at their next check. Nothing of theirs runs here.
            guard started else { return }
            for deviceId in now.subtracting(owned) {
                owned.insert(deviceId)
                await adopt(deviceId)
                logger.notice("MPN device taken over from a dead instance", metadata: ["device": "\(deviceId)"])
            }
            for deviceId in owned.subtracting(now) {
                owned.remove(deviceId)
                await release(deviceId)
            }
            // Entries of devices taken over, or left by a dead claimant.
            await resendOutbox()
        } catch  where !started {
            logger.debug("MPN module check cut short by the shutdown", metadata: ["error": "\(String(describing: error).logEscaped())"])
        } catch {
            logger.error("MPN module check failed", metadata: ["error": "\(String(describing: error).logEscaped())"])
        }
    }

    /// Runs a device this instance now owns: its state is reloaded from the store (another
    /// instance may have changed it) and its ACTIVE subscriptions subscribe their items.
    func adopt(_ deviceId: String) async {
        guard let subscriptions = try? await store.subscriptions(deviceId: deviceId, status: nil) else { return }
        if let d = try? await store.device(id: deviceId) {
            devices[deviceId] = d
            internalAdapter.publish(device: d)
        }
        let ids = Set(subscriptions.map(\.id))
        for (id, r) in running where r.record.deviceId == deviceId && !ids.contains(id) {
            await stopTable(id)
            running.removeValue(forKey: id)
            internalAdapter.remove(subscriptionId: id, deviceId: deviceId)
        }
        for r in subscriptions {
            await stopTable(r.id)
            internalAdapter.publish(subscription: r)
            guard let prepared = try? prepare(r) else {
                running.removeValue(forKey: r.id)
                continue
            }
            running[r.id] = prepared
            if r.status == .active, devices[deviceId]?.status == .active { await startTable(r.id) }
        }
    }

    /// Stops running a device another instance took over.
    func release(_ deviceId: String) async {
        for (id, r) in running where r.record.deviceId == deviceId {
            await stopTable(id)
            forgetFiredTrigger(id)
            running.removeValue(forKey: id)
        }
        queues.removeValue(forKey: deviceId)?.timer?.cancel()
    }

    func scheduleCollector() {
        let minutes = Int64(max(1, configuration.inactivity.collectorPeriodMinutes))
        collectorTimer = clock.schedule(afterNanoseconds: MPNRetryDelay.nanoseconds(Saturating.multiply(minutes, 60_000))) { [weak self] in
            self?.post(.collect)
        }
    }
}

/// Receives one MPN subscription's item events from the `ItemEngine`.
final class MPNTableSink: TableSink {
    let subscriptionId: String
    let generation: UInt64
    weak let module: MPNModule?

    init(subscriptionId: String, generation: UInt64, module: MPNModule) {
        self.subscriptionId = subscriptionId
        self.generation = generation
        self.module = module
    }

    func deliver(_ event: TableEvent) {
        guard case .update(let item, let values, let isSnapshot) = event else { return }
        module?.post(
            .update(
                subscriptionId: subscriptionId, generation: generation, item: item, values: values,
                isSnapshot: isSnapshot))
    }
}
