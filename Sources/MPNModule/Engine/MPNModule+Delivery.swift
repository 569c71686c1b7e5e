import LightstreamerServer
import Logging
import TLCP

/// A notification waiting to be rendered and sent.
struct PendingNotification: Sendable {
    var subscriptionId: String
    var item: Int
    var values: [String?]
    var attempts = 0
    /// The AUTO badge value, once allocated (retries reuse it).
    var badge: Int?
}

/// Per-device delivery state: pacing and the queue of waiting notifications.
struct DeviceQueue: Sendable {
    var pending: [PendingNotification] = []
    /// Monotonic time (ns) of the last send attempt.
    var lastSentAt: UInt64?
    /// No send before this (retry backoff).
    var notBefore: UInt64 = 0
    var inFlight = false
    var timer: (any EngineTimer)?
}

extension MPNModule {
    /// Queues a paced notification. MERGE: replaces the waiting one of the same subscription
    /// and item (latest values win); DISTINCT: appends. Bounded per device (oldest dropped).
    func enqueue(_ n: PendingNotification, deviceId: String, mode: SubscriptionMode) {
        var q = queues[deviceId] ?? DeviceQueue()
        if mode == .merge, let i = q.pending.firstIndex(where: { $0.subscriptionId == n.subscriptionId && $0.item == n.item }) {
            q.pending[i].values = n.values
        } else {
            q.pending.append(n)
            if q.pending.count > max(1, configuration.pacing.maxPendingPerDevice) {
                q.pending.removeFirst()
                statistics.dropped += 1
            }
        }
        queues[deviceId] = q
    }

    /// Sends the device's next waiting notification when pacing allows, or arms a timer.
    func pump(_ deviceId: String) async {
        guard var q = queues[deviceId], !q.inFlight, !q.pending.isEmpty else { return }
        let now = clock.now()
        let minDelay = MPNRetryDelay.nanoseconds(Int64(configuration.pacing.minSendDelayMillis))
        let due = max(q.lastSentAt.map { $0 &+ minDelay } ?? 0, q.notBefore)
        if now >= due {
            let next = q.pending.removeFirst()
            q.inFlight = true
            q.lastSentAt = now
            queues[deviceId] = q
            await send(next, deviceId: deviceId)
        } else if q.timer == nil {
            q.timer = clock.schedule(at: due) { [weak self] in self?.post(.pacingTimer(deviceId: deviceId)) }
            queues[deviceId] = q
        }
    }

    /// Renders and hands one notification to its provider (in a task; the result comes back
    /// as an event). Notifications whose subscription or device vanished are dropped.
    func send(_ n: PendingNotification, deviceId: String) async {
        guard let r = running[n.subscriptionId], let device = devices[deviceId], device.status == .active,
            let provider = providers.provider(device.platform, device.applicationId),
            !admin.isSuspended(device.platform, device.applicationId)
        else {
            statistics.dropped += 1
            queues[deviceId]?.inFlight = false
            return
        }
        var badge = n.badge
        if badge == nil, r.format.usesAutoBadge { badge = try? await store.nextBadge(deviceId: deviceId) }
        var n = n
        n.badge = badge
        let limit = configuration.limits.payloadLimit(device.platform)
        guard let text = r.format.renderText(values: n.values, subscriptionId: n.subscriptionId, badge: badge, limit: limit),
            let payload = try? JSONValue.parse(text)
        else {
            logger.warning(
                "MPN notification over the payload limit dropped",
                metadata: ["subscription": "\(n.subscriptionId)", "limit": "\(limit)"])
            statistics.dropped += 1
            metrics.notification(platform: device.platform.rawValue, app: device.applicationId, outcome: "dropped")
            queues[deviceId]?.inFlight = false
            return
        }
        let notification = MPNNotification(
            platform: device.platform, applicationId: device.applicationId,
            deviceToken: device.deviceToken, deviceId: deviceId, subscriptionId: n.subscriptionId,
            payload: payload)
        outstanding.withLockedValue { $0 += 1 }
        let metrics = self.metrics
        Task { [weak self] in
            let started = ContinuousClock.now
            let result = await provider.send(notification)
            metrics.sent(notification, result, since: started)
            self?.post(.sent(deviceId: deviceId, notification: n, result: result))
            self?.outstanding.withLockedValue { $0 -= 1 }
        }
    }

    func handleResult(_ deviceId: String, _ n: PendingNotification, _ result: MPNDeliveryResult) async {
        queues[deviceId]?.inFlight = false
        if let d = devices[deviceId] {
            switch result {
            case .delivered: admin.count(d.platform, d.applicationId, sent: true)
            case .rejected, .deviceInvalid: admin.count(d.platform, d.applicationId, sent: false)
            case .retry, .authenticationFailed: break
            }
        }
        switch result {
        case .delivered:
            statistics.delivered += 1
        case .rejected(let reason):
            logger.warning(
                "MPN notification refused by the provider",
                metadata: ["subscription": "\(n.subscriptionId)", "reason": "\(String(describing: reason).logEscaped())"])
            statistics.dropped += 1
        case .deviceInvalid(let reason):
            await suspend(deviceId, reason: reason)
            return
        case .retry, .authenticationFailed:
            let (reason, hint) = result.retryReasonAndHint
            var retried = n
            retried.attempts += 1
            guard retried.attempts < max(1, configuration.retry.maxAttempts) else {
                logger.warning(
                    "MPN notification dropped after retries",
                    metadata: ["subscription": "\(n.subscriptionId)", "reason": "\(String(describing: reason).logEscaped())"])
                statistics.dropped += 1
                if let d = devices[deviceId] { admin.count(d.platform, d.applicationId, sent: false) }
                break
            }
            statistics.retried += 1
            let delay = MPNRetryDelay.nanoseconds(configuration.retry.delayMillis(attempt: retried.attempts, hintMillis: hint))
            var q = queues[deviceId] ?? DeviceQueue()
            // A newer MERGE value for the same item supersedes the failed one.
            let superseded =
                running[n.subscriptionId]?.record.mode == .merge
                && q.pending.contains { $0.subscriptionId == n.subscriptionId && $0.item == n.item }
            if !superseded { q.pending.insert(retried, at: 0) }
            q.notBefore = clock.now() &+ delay
            queues[deviceId] = q
        }
        await pump(deviceId)
    }
}
