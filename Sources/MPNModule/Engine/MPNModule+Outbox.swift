import Logging
import TLCP

/// The outbox side of the engine: notifications of fired triggers are committed with the
/// TRIGGERED state (`MPNStore.commitTriggers`), then sent, then deleted; failures for good are
/// marked FAILED and counted. Entries left PENDING by a crash are claimed and sent at start and
/// when this instance takes over a dead instance's devices.
extension MPNModule {
    /// Marks the fired triggers TRIGGERED, allocates their AUTO badges and writes their
    /// notifications to the outbox, all in one commit (compare-and-set: only subscriptions
    /// still ACTIVE win), then sends each winner's notification. On a store failure nothing is
    /// sent: the subscriptions stay ACTIVE and fire on a later update.
    func commitTriggers() async {
        let batch = firedTriggers
        firedTriggers = []
        firedTriggerIds = []
        guard !batch.isEmpty else { return }
        let now = nowMillis
        var fired: [MPNFiredTrigger] = []
        for n in batch {
            guard let r = running[n.subscriptionId], let device = devices[r.record.deviceId] else { continue }
            let format = r.format
            let limit = configuration.limits.payloadLimit(device.platform)
            let values = n.values
            let id = n.subscriptionId
            fired.append(
                MPNFiredTrigger(
                    subscriptionId: id, deviceId: device.id, usesAutoBadge: format.usesAutoBadge,
                    refusal: "payload over the \(limit)-byte limit"
                ) { badge in
                    format.renderText(values: values, subscriptionId: id, badge: badge, limit: limit)
                })
        }
        let entries: [MPNOutboxEntry]
        do { entries = try await store.commitTriggers(fired, moduleId: moduleId, now: now) } catch {
            logger.error(
                "MPN triggers cannot be persisted; they will fire on a later update",
                metadata: ["count": "\(batch.count)", "error": "\(String(describing: error).logEscaped())"])
            return
        }
        for e in entries {
            let id = e.subscriptionId
            running[id]?.record.status = .triggered
            running[id]?.record.statusTimestamp = now
            running[id]?.record.lastTriggerTime = now
            statistics.triggered += 1
            if let rec = running[id]?.record { internalAdapter.publish(subscription: rec) }
            await stopTable(id)
            if e.status == .failed {
                statistics.failed += 1
                logger.warning(
                    "MPN notification refused before sending",
                    metadata: ["subscription": "\(id)", "reason": "\(e.failure ?? "")"])
                continue
            }
            sendOutbox(e, attempts: 0)
        }
    }

    /// Claims the PENDING outbox entries of the devices this instance runs (those a crash left
    /// unsent, or a dead instance's) and sends those not already under way here.
    func resendOutbox() async {
        let entries: [MPNOutboxEntry]
        do { entries = try await store.claimOutbox(moduleId: moduleId, silentBefore: orphanCutoff) } catch {
            logger.error("MPN outbox cannot be read", metadata: ["error": "\(String(describing: error).logEscaped())"])
            return
        }
        for e in entries where !outboxUnderWay.contains(e.id) {
            if devices[e.deviceId] == nil, let d = try? await store.device(id: e.deviceId) { devices[d.id] = d }
            sendOutbox(e, attempts: 0)
        }
    }

    /// Hands one outbox entry to its provider (in a task; the result comes back as an event),
    /// with the entry id as idempotency and collapse key.
    func sendOutbox(_ e: MPNOutboxEntry, attempts: Int) {
        outboxUnderWay.insert(e.id)
        guard let device = devices[e.deviceId] else {
            // The device was deleted (its outbox went with it).
            outboxUnderWay.remove(e.id)
            statistics.dropped += 1
            return
        }
        guard device.status == .active else {
            failOutbox(e, reason: "device suspended")
            return
        }
        guard !admin.isSuspended(device.platform, device.applicationId) else {
            // Kept in the outbox: sent at a later claim, once the application is resumed.
            outboxUnderWay.remove(e.id)
            return
        }
        guard let provider = providers.provider(device.platform, device.applicationId) else {
            failOutbox(e, reason: "no provider for \(device.platform.rawValue)/\(device.applicationId)")
            return
        }
        guard let payload = try? JSONValue.parse(e.payload) else {
            failOutbox(e, reason: "stored payload is not JSON")
            return
        }
        let notification = MPNNotification(
            platform: device.platform, applicationId: device.applicationId,
            deviceToken: device.deviceToken, deviceId: device.id, subscriptionId: e.subscriptionId,
            payload: payload, triggered: true, idempotencyKey: e.id)
        outstanding.withLockedValue { $0 += 1 }
        let metrics = self.metrics
        Task { [weak self] in
            let started = ContinuousClock.now
            let result = await provider.send(notification)
            metrics.sent(notification, result, since: started)
            self?.post(.outboxSent(entry: e, attempts: attempts, result: result))
            self?.outstanding.withLockedValue { $0 -= 1 }
        }
    }

    func handleOutboxResult(_ e: MPNOutboxEntry, attempts: Int, _ result: MPNDeliveryResult) async {
        switch result {
        case .delivered:
            outboxUnderWay.remove(e.id)
            statistics.delivered += 1
            if let d = devices[e.deviceId] { admin.count(d.platform, d.applicationId, sent: true) }
            do { try await store.deleteOutboxEntry(id: e.id) } catch {
                // Sent again after a restart, under the same id (collapsed by the provider).
                logger.error(
                    "MPN outbox entry sent but not cleared",
                    metadata: ["entry": "\(e.id)", "error": "\(String(describing: error).logEscaped())"])
            }
        case .rejected(let reason):
            failOutbox(e, reason: reason)
        case .deviceInvalid(let reason):
            failOutbox(e, reason: reason)
            await suspend(e.deviceId, reason: reason)
        case .retry, .authenticationFailed:
            let (reason, hint) = result.retryReasonAndHint
            let next = Saturating.add(attempts, 1)
            guard next < max(1, configuration.retry.maxAttempts) else {
                failOutbox(e, reason: "retries exhausted: \(reason)")
                return
            }
            statistics.retried += 1
            let delay = MPNRetryDelay.nanoseconds(configuration.retry.delayMillis(attempt: next, hintMillis: hint))
            clock.schedule(afterNanoseconds: delay) { [weak self] in
                self?.post(.retryOutbox(entry: e, attempts: next))
            }
        }
    }

    /// Marks the entry FAILED (in a task: the store write does not hold up the actor) and counts it.
    func failOutbox(_ e: MPNOutboxEntry, reason: String) {
        outboxUnderWay.remove(e.id)
        statistics.failed += 1
        if let d = devices[e.deviceId] { admin.count(d.platform, d.applicationId, sent: false) }
        logger.warning(
            "MPN notification failed for good",
            metadata: ["subscription": "\(e.subscriptionId)", "reason": "\(String(describing: reason).logEscaped())"])
        let store = self.store
        outstanding.withLockedValue { $0 += 1 }
        Task { [weak self] in
            _ = try? await store.failOutboxEntry(id: e.id, reason: String(reason.prefix(1000)))
            self?.outstanding.withLockedValue { $0 -= 1 }
        }
    }
}
