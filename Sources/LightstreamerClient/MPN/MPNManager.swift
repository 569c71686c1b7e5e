import Foundation
import NIOConcurrencyHelpers
import TLCP

/// Runs the `MPNEngine` of one client: API calls, MPN notifications and internal item updates
/// go in under one lock; actions come out in order (controls to the session engine, internal
/// subscriptions, object state, delegate events on the callback queue).
final class MPNManager: Sendable {
    /// The engine and the objects it drives, only touched under the box's lock.
    private struct State {
        var engine = MPNEngine()
        var device: MPNDevice?
        var objects: [Int: MPNSubscription] = [:]
        var nextKey = 1
        var internalSubscriptions: [Subscription] = []
        /// Requests of the event being handled, posted together at its end.
        var outgoing: [SessionEngine.ExternalControl] = []
    }

    private let state = NIOLockedValueBox(State())
    private weak let core: ClientCore?

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
                let sid = core.details.sessionId
            {
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

    var registeredDevice: MPNDevice? { state.withLockedValue { $0.device } }

    func register(_ d: MPNDevice) {
        let info = MPNEngine.DeviceInfo(
            platform: d.platform == "Google" ? .google : .apple, applicationId: d.applicationId,
            token: d.deviceToken, previousToken: d.rotatedFrom)
        state.withLockedValue { s in
            if let old = s.device, old !== d {
                d.apply(status: old.status, timestamp: old.statusTimestamp, deviceId: old.deviceId)
            }
            s.device = d
        }
        let available = core.map { !$0.status.isDisconnected && $0.status != .connecting } ?? false
        handle(.register(info, sessionAvailable: available))
    }

    func subscribe(_ s: MPNSubscription, coalescing: Bool) {
        let request = s.request
        let key: Int = state.withLockedValue { state in
            let k = state.nextKey
            state.nextKey += 1
            state.objects[k] = s
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
        state.withLockedValue { state in
            let engine = state.engine
            var seen: Set<String> = []
            var result: [MPNSubscription] = []
            let keys = engine.subscriptions.keys.filter { $0 > 0 }.sorted() + engine.subscriptions.keys.filter { $0 < 0 }.sorted(by: >)
            for k in keys {
                guard let s = engine.subscriptions[k], engine.matches(s, filter), let id = s.id, let o = state.objects[k] else { continue }
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
        state.withLockedValue { s in
            let actions = s.engine.handle(event)
            for a in actions { execute(a, &s) }
            // The requests of one event go together: they can share a batch.
            core?.sendExternalControls(s.outgoing)
            s.outgoing = []
        }
    }

    private func execute(_ a: MPNEngine.Action, _ s: inout State) {
        switch a {
        case .send(let token, let op, let cause):
            // A register is for whichever session comes; other requests only for the session
            // the engine is in (if it ended meanwhile, they come back as not sent).
            var session: String?
            if case .mpnRegister = op { session = nil } else { session = s.engine.sessionId }
            s.outgoing.append(SessionEngine.ExternalControl(token: token, operation: op, cause: cause, session: session))
        case .subscribeInternal(let deviceId, let adapter):
            if let subscriptions = subscribeInternal(deviceId: deviceId, adapter: adapter) { s.internalSubscriptions = subscriptions }
        case .unsubscribeInternal:
            for sub in s.internalSubscriptions { core?.unsubscribe(sub) }
            s.internalSubscriptions = []
        case .deviceState(let status, let ts, let id):
            s.device?.apply(status: status, timestamp: ts, deviceId: id)
        case .deviceEvent(let e):
            guard let d = s.device else { return }
            let targets = d.delegates
            guard !targets.isEmpty else { return }
            let box = UncheckedBox(targets)
            CallbackQueue.queue.async { for t in box.value { e.deliver(to: t, d) } }
        case .createSubscription(let key):
            let o = MPNSubscription(subscriptionMode: .MERGE)
            o.manager = self
            o.key = key
            s.objects[key] = o
        case .removeSubscription(let key):
            s.objects.removeValue(forKey: key)
        case .subscriptionState(let key, let value):
            s.objects[key]?.apply(value)
        case .subscriptionEvents(let key, let events):
            s.objects[key]?.notify(events)
        }
    }

    /// Subscribes the device's internal items; returns their subscriptions (nil without a client).
    private func subscribeInternal(deviceId: String, adapter: String) -> [Subscription]? {
        guard let core else { return nil }
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
        return [dev, list]
    }
}

/// Feeds the internal items' events to the MPN engine.
final class MPNInternalDelegate: SubscriptionDelegate, Sendable {
    enum Kind { case device, list }
    let kind: Kind
    weak let manager: MPNManager?

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
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {}
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {}
}
