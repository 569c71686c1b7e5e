import Foundation
import TLCP

/// Runs the `MPNEngine` of one client: API calls, MPN notifications and internal item updates
/// go in under one lock; actions come out in order (controls to the session engine, internal
/// subscriptions, object state, delegate events on the callback queue).
/// `@unchecked Sendable`: every mutable property is only touched under `lock`.
final class MPNManager: @unchecked Sendable {
    private let lock = Lock()
    private var engine = MPNEngine()
    private weak var core: ClientCore?
    private var device: MPNDevice?
    private var objects: [Int: MPNSubscription] = [:]
    private var nextKey = 1
    private var internalSubscriptions: [Subscription] = []
    /// Requests of the event being handled, posted together at its end.
    private var outgoing: [SessionEngine.ExternalControl] = []

    init(core: ClientCore) {
        self.core = core
    }

    /// Installs the extension hook on the engine queue; reports a session that already exists.
    func attach() {
        guard let core else { return }
        core.queue.async { [weak self, weak core] in
            guard let self, let core else { return }
            core.extensionHook = { [weak self] n in self?.extensionNotification(n) }
            if core.status != .disconnected && core.status != .willRetry && core.status != .tryingRecovery && core.status != .connecting,
               let sid = core.details.sessionId {
                self.handle(.sessionStarted(id: sid))
            }
        }
    }

    private func extensionNotification(_ n: SessionEngine.Notification) {
        switch n {
        case .mpn(let notification): handle(.notification(notification))
        case .externalReply(let token, let code, let message): handle(.reply(token: token, code: code, message: message))
        case .sessionStarted(let id): handle(.sessionStarted(id: id))
        case .sessionEnded: handle(.sessionEnded)
        case .externalDropped(let token, let sent): handle(.dropped(token: token, sent: sent))
        case .externalSubscriptionId(let token, let subId): handle(.subscriptionIdAssigned(token: token, subscriptionId: subId))
        // Notifications the client core handles itself; it hands the extension only the cases above.
        case .status, .serverError, .property, .subscription, .message: break
        }
    }

    // MARK: API

    var registeredDevice: MPNDevice? { lock.withLock { device } }

    func register(_ d: MPNDevice) {
        let info = MPNEngine.DeviceInfo(platform: d.platform == "Google" ? .google : .apple, applicationId: d.applicationId,
                                 token: d.deviceToken, previousToken: d.rotatedFrom)
        lock.withLock {
            if let old = device, old !== d {
                d.apply(status: old.status, timestamp: old.statusTimestamp, deviceId: old.deviceId)
            }
            device = d
        }
        let available = core.map { !$0.status.isDisconnected && $0.status != .connecting } ?? false
        handle(.register(info, sessionAvailable: available))
    }

    func subscribe(_ s: MPNSubscription, coalescing: Bool) {
        let request = s.request
        let key: Int = lock.withLock {
            let k = nextKey
            nextKey += 1
            objects[k] = s
            s.manager = self
            s.key = k
            return k
        }
        handle(.subscribe(key: key, request, coalescing: coalescing))
    }

    func unsubscribe(_ s: MPNSubscription) {
        guard let key = s.key else { return }
        handle(.unsubscribe(key: key))
    }

    func unsubscribeMultiple(_ filter: LightstreamerClient.MPNSubscriptionStatus) { handle(.unsubscribeFilter(filter)) }
    func resetBadge() { handle(.resetBadge) }
    func modify(key: Int, _ m: MPNEngine.Modification) { handle(.modify(key: key, m)) }

    /// One object per subscription id, the application's own preferred.
    func list(_ filter: LightstreamerClient.MPNSubscriptionStatus) -> [MPNSubscription] {
        lock.withLock {
            var seen: Set<String> = []
            var result: [MPNSubscription] = []
            let keys = engine.subscriptions.keys.filter { $0 > 0 }.sorted() + engine.subscriptions.keys.filter { $0 < 0 }.sorted(by: >)
            for k in keys {
                guard let s = engine.subscriptions[k], engine.matches(s, filter), let id = s.id, let o = objects[k] else { continue }
                if seen.insert(id).inserted { result.append(o) }
            }
            return result
        }
    }

    func find(_ id: String) -> MPNSubscription? {
        list(.ALL).first { $0.subscriptionId == id }
    }

    // MARK: engine

    func handle(_ event: MPNEngine.Event) {
        lock.withLock {
            let actions = engine.handle(event)
            for a in actions { execute(a) }
            // The requests of one event go together: they can share a batch.
            core?.sendExternalControls(outgoing)
            outgoing = []
        }
    }

    private func execute(_ a: MPNEngine.Action) {
        switch a {
        case .send(let token, let op, let cause):
            // A register is for whichever session comes; other requests only for the session
            // the engine is in (if it ended meanwhile, they come back as not sent).
            var session: String?
            if case .mpnRegister = op { session = nil } else { session = engine.sessionId }
            outgoing.append(SessionEngine.ExternalControl(token: token, operation: op, cause: cause, session: session))
        case .subscribeInternal(let deviceId, let adapter):
            subscribeInternal(deviceId: deviceId, adapter: adapter)
        case .unsubscribeInternal:
            for s in internalSubscriptions { core?.unsubscribe(s) }
            internalSubscriptions = []
        case .deviceState(let status, let ts, let id):
            device?.apply(status: status, timestamp: ts, deviceId: id)
        case .deviceEvent(let e):
            guard let d = device else { return }
            let targets = d.delegates
            guard !targets.isEmpty else { return }
            let box = UncheckedBox((targets, d))
            CallbackQueue.queue.async { for t in box.value.0 { e.deliver(to: t, box.value.1) } }
        case .createSubscription(let key):
            let o = MPNSubscription(subscriptionMode: .MERGE)
            o.manager = self
            o.key = key
            objects[key] = o
        case .removeSubscription(let key):
            objects.removeValue(forKey: key)
        case .subscriptionState(let key, let s):
            objects[key]?.apply(s)
        case .subscriptionEvents(let key, let events):
            objects[key]?.notify(events)
        }
    }

    private func subscribeInternal(deviceId: String, adapter: String) {
        guard let core else { return }
        let dev = Subscription(subscriptionMode: .MERGE, item: "DEV-" + deviceId, fields: ["status", "status_timestamp"])
        let list = Subscription(subscriptionMode: .COMMAND, item: "SUBS-" + deviceId, fields: ["key", "command"])
        list.commandSecondLevelFields = MPNEngine.secondLevelFields
        list.commandSecondLevelDataAdapter = adapter
        for (s, kind) in [(dev, MPNInternalDelegate.Kind.device), (list, .list)] {
            s.dataAdapter = adapter
            s.requestedSnapshot = .yes
            s.requestedMaxFrequency = .unfiltered
            s.addDelegate(MPNInternalDelegate(kind, self))
            core.subscribeInternal(s)
        }
        internalSubscriptions = [dev, list]
    }
}

/// Feeds the internal items' events to the MPN engine.
/// `@unchecked Sendable`: `manager` is a weak reference set once at creation and only read afterwards.
final class MPNInternalDelegate: SubscriptionDelegate, @unchecked Sendable {
    enum Kind { case device, list }
    let kind: Kind
    weak var manager: MPNManager?

    init(_ kind: Kind, _ manager: MPNManager) {
        self.kind = kind
        self.manager = manager
    }

    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {
        let f = itemUpdate.fields
        switch kind {
        case .device:
            manager?.handle(.deviceItem(status: f["status"] ?? nil, timestamp: f["status_timestamp"] ?? nil))
        case .list:
            guard let key = f["key"] ?? nil else { return }
            var values: [String: String?] = [:]
            for name in MPNEngine.secondLevelFields { values[name] = f[name] ?? nil }
            manager?.handle(.subscriptionsItem(key: key, command: f["command"] ?? nil, values: values))
        }
    }

    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {
        if kind == .list { manager?.handle(.subscriptionsEndOfSnapshot) }
    }

    func subscriptionDidSubscribe(_ subscription: Subscription) {
        if kind == .list { manager?.handle(.subscriptionsItemSubscribed) }
    }

    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) {
        manager?.handle(.internalFailed(code: kind == .device ? 1 : 2, message: "\(code) \(message ?? "")"))
    }

    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {}
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {}
}
