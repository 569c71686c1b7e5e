import Logging

/// # Internal items across servers
///
/// Every server publishes the internal `DEV-`/`SUBS-`/`SUB-` items of every device in the store,
/// whichever server runs it. On a shared store (PostgreSQL) each change of a device's status or
/// of its subscriptions, made through any server (activations, deactivations, triggers fired,
/// suspensions, collections), is announced by the database (`MPNStore.watchChanges`); the
/// module then reads that device again and sends what differs. The delay is the announcement's
/// (milliseconds) plus two queries. While the watch's connection is down nothing is announced:
/// it is opened again every `changeWatchRetry`, and then everything is read again.
extension MPNModule {
    static let changeWatchRetry: Duration = .seconds(1)
    /// After a failed read of the store, the next attempt.
    static let changeSyncRetryNanoseconds: UInt64 = 1_000_000_000

    func startChangeWatcher() {
        guard store.isShared, changeWatcher == nil else { return }
        let store = self.store
        let logger = self.logger
        let sink: @Sendable (MPNStoreChange) -> Void = { [weak self] change in self?.post(.storeChange(change)) }
        changeWatcher = Task.detached {
            while !Task.isCancelled {
                do {
                    try await store.watchChanges(sink)
                } catch {
                    if Task.isCancelled { return }
                    logger.warning(
                        "MPN change watch lost; other servers' changes show once it is back",
                        metadata: ["error": "\(String(describing: error).logEscaped())"])
                }
                try? await Task.sleep(for: Self.changeWatchRetry)
            }
        }
    }

    func noteStoreChange(_ change: MPNStoreChange) {
        switch change {
        case .resync: resyncDue = true
        case .device(let id): changedDevices.insert(id)
        }
        postSync()
    }

    private func postSync() {
        guard !syncPosted else { return }
        syncPosted = true
        post(.syncChanges)
    }

    /// Reads the devices announced changed (everything after a `.resync`) and brings their
    /// internal items to what the store holds. A device the module published meanwhile is read
    /// again (what was read may be older than what it published).
    func syncChanges() async {
        guard started else { return }
        var ids = changedDevices
        let full = resyncDue
        changedDevices.removeAll()
        resyncDue = false
        let before = internalAdapter.revisions
        var loaded: [String: (device: MPNDeviceRecord?, subscriptions: [MPNSubscriptionRecord])] = [:]
        do {
            if full {
                for d in try await store.allDevices() { loaded[d.id] = (d, []) }
                for r in try await store.allSubscriptions(status: nil) {
                    loaded[r.deviceId, default: (nil, [])].subscriptions.append(r)
                }
                ids.formUnion(loaded.keys)
                ids.formUnion(internalAdapter.knownDevices)
            } else {
                for id in ids {
                    let device = try await store.device(id: id)
                    let subscriptions = device == nil ? [] : try await store.subscriptions(deviceId: id, status: nil)
                    loaded[id] = (device, subscriptions)
                }
            }
        } catch {
            guard started else { return } // shut down meanwhile
            logger.warning(
                "MPN store unreadable for other servers' changes; retrying",
                metadata: ["error": "\(String(describing: error).logEscaped())"])
            changedDevices.formUnion(ids)
            resyncDue = resyncDue || full
            syncPosted = true
            _ = clock.schedule(afterNanoseconds: Self.changeSyncRetryNanoseconds) { [weak self] in self?.post(.syncChanges) }
            return
        }
        var stale: Set<String> = []
        for id in ids {
            let (device, subscriptions) = loaded[id] ?? (nil, [])
            guard
                internalAdapter.reconcile(
                    deviceId: id, device: device, subscriptions: subscriptions,
                    ifRevision: before[id] ?? 0)
            else {
                stale.insert(id)
                continue
            }
            // Devices run elsewhere: keep their record current (or drop it) here too.
            if !owned.contains(id) { devices[id] = device }
        }
        if !stale.isEmpty {
            changedDevices.formUnion(stale)
            postSync()
        }
    }
}

extension MPNModule {
    /// Stops the change watch as a lost connection would (tests).
    func stopChangeWatcherForTesting() async {
        let watcher = changeWatcher
        changeWatcher = nil
        watcher?.cancel()
        await watcher?.value
    }

    /// Starts it again (tests): the new watch reads everything again.
    func startChangeWatcherForTesting() {
        startChangeWatcher()
    }
}
