import TLCP

/// The MPN half of the client as a state machine without I/O: device registration (queued
/// until a session exists, restored on every new session, token refresh), activation,
/// reconfiguration and deactivation of MPN subscriptions, badge reset, and the internal
/// `DEV-`/`SUBS-`/`SUB-` items that keep subscription objects in step with the server.
/// Each `handle(_:)` returns the actions the runtime must carry out, in order.
///
/// Split by concern: this file (device), `MPNEngine+Subscriptions` (MPN subscriptions),
/// `MPNEngine+Items` (internal items).
struct MPNEngine {
    var device: MPNEngine.DeviceInfo?
    /// The token the server knows the device by (after a successful registration).
    var registeredToken: String?
    var deviceId: String?
    var adapterName: String?
    var deviceStatus: MPNDevice.Status = .UNKNOWN
    var deviceTimestamp: Int64?
    var sessionId: String?
    /// MPNREG arrived in the current session: other MPN operations may go.
    var registeredInSession = false
    /// Registers sent (or queued for the next session) whose MPNREG is awaited.
    var registrationsAwaited = 0
    var internalSubscribed = false

    var subscriptions: [Int: MPNEngine.SubscriptionState] = [:]
    /// Operations waiting for the device to be registered in the session.
    var waiting: [PendingMPNOperation] = []
    /// Requests sent, by token.
    var inFlight: [Int: PendingMPNOperation] = [:]
    var nextToken = 1
    /// Keys of server-made subscription objects start here and go down.
    var nextServerKey = -1

    // internal items
    var knownServerIds: Set<String> = []
    var awaitingFirstValues: Set<String> = []
    var snapshotComplete = false
    var seenInSnapshot: Set<String> = []

    var actions: [MPNEngine.Action] = []

    init() {}

    mutating func handle(_ event: MPNEngine.Event) -> [MPNEngine.Action] {
        actions.removeAll(keepingCapacity: true)
        switch event {
        case .register(let d, let available): registerRequested(d, sessionAvailable: available)
        case .sessionStarted(let id): sessionStarted(id)
        case .sessionEnded: sessionEnded()
        case .dropped(let token, let sent): dropped(token: token, sent: sent)
        case .subscriptionIdAssigned(let token, let subId): subscriptionIdAssigned(token: token, subId: subId)
        case .notification(let n): notificationReceived(n)
        case .reply(let token, let code, let message): replyReceived(token: token, code: code, message: message)
        case .subscribe(let key, let request, let coalescing): subscribeRequested(key: key, request, coalescing: coalescing)
        case .unsubscribe(let key): unsubscribeRequested(key: key)
        case .unsubscribeFilter(let f): unsubscribeFilterRequested(f)
        case .modify(let key, let m): modifyRequested(key: key, m)
        case .resetBadge: perform(.resetBadge)
        case .deviceItem(let s, let ts): deviceItemUpdated(status: s, timestamp: ts)
        case .subscriptionsItem(let key, let command, let values): subscriptionsItemUpdated(key: key, command: command, values: values)
        case .subscriptionsEndOfSnapshot: subscriptionsSnapshotEnded()
        case .subscriptionsItemSubscribed: subscriptionsRestarted()
        case .internalFailed(let code, let message): internalFailed(code: code, message: message)
        }
        return actions
    }

    mutating func emit(_ a: MPNEngine.Action) { actions.append(a) }

    // MARK: device

    mutating func registerRequested(_ d: MPNEngine.DeviceInfo, sessionAvailable: Bool) {
        let previous = device
        device = d
        if previous != nil, previous?.platform != d.platform || previous?.applicationId != d.applicationId {
            // Another application or platform: a different device for the server.
            registeredToken = nil
            deviceId = nil
            adapterName = nil
            registeredInSession = false
            if internalSubscribed {
                emit(.unsubscribeInternal)
                internalSubscribed = false
            }
        }
        // Without a session the request waits in the session engine's queue, where it goes
        // out first when the next session starts.
        _ = sessionAvailable
        sendRegister(cause: registeredToken != nil && registeredToken != d.token ? "refresh.token" : nil)
    }

    mutating func sessionStarted(_ id: String) {
        if sessionId != nil, sessionId != id { sessionEnded() }
        sessionId = id
        // The register queued when the previous session ended (or by `register(forMPN:)`
        // before the first one) is the first request of this session.
        guard device != nil, registrationsAwaited == 0, !registeredInSession else { return }
        sendRegister(cause: registeredToken != nil ? "restore.token" : nil)
    }

    /// The session ended: the device is no longer registered (status UNKNOWN), the internal
    /// items go with the session, and the registration is queued for the next session, ahead
    /// of any other request; operations wait for its MPNREG.
    mutating func sessionEnded() {
        sessionId = nil
        registeredInSession = false
        registrationsAwaited = 0
        // Registers of the ended session are replaced by the one below. Other requests still
        // in flight were handed to the session engine too late for this session: they come
        // back with `dropped` (not sent) and wait for the next registration.
        for (token, op) in inFlight where op == .register { inFlight.removeValue(forKey: token) }
        if internalSubscribed {
            internalSubscribed = false
            emit(.unsubscribeInternal)
        }
        snapshotComplete = false
        seenInSnapshot = []
        awaitingFirstValues = []
        if deviceStatus != .UNKNOWN { setDeviceStatus(.UNKNOWN, timestamp: 0) }
        disconnectSubscriptions()
        guard device != nil else { return }
        sendRegister(cause: registeredToken != nil ? "restore.token" : nil)
    }

    /// The session engine handed back a request of an ended session.
    mutating func dropped(token: Int, sent: Bool) {
        guard let op = inFlight.removeValue(forKey: token) else { return }
        if op == .register { return } // the next session registers again
        if sent {
            abort(op, code: 54, message: "The request was aborted because the session was closed")
            return
        }
        // Never sent: it goes again once the device is registered in the next session.
        if case .activate(let key, _) = op, var s = subscriptions[key] {
            s.activationToken = nil
            s.activationSubId = nil
            subscriptions[key] = s
        }
        waiting.append(op)
    }

    mutating func subscriptionIdAssigned(token: Int, subId: Int) {
        guard case .activate(let key, _)? = inFlight[token], var s = subscriptions[key], s.activationToken == token else { return }
        s.activationSubId = subId
        subscriptions[key] = s
    }

    mutating func sendRegister(cause: String?) {
        guard let d = device else { return }
        let params: MPNRegisterParameters
        if let known = registeredToken {
            // Refresh (new token) or restore (same token): old token first, then the current one.
            params = MPNRegisterParameters(
                platform: d.platform, applicationId: d.applicationId, deviceToken: known,
                newDeviceToken: d.token)
        } else if let previous = d.previousToken {
            params = MPNRegisterParameters(
                platform: d.platform, applicationId: d.applicationId, deviceToken: previous,
                newDeviceToken: d.token)
        } else {
            params = MPNRegisterParameters(platform: d.platform, applicationId: d.applicationId, deviceToken: d.token)
        }
        registrationsAwaited += 1
        send(.register, .mpnRegister(params), cause: cause)
    }

    @discardableResult
    mutating func send(_ op: PendingMPNOperation, _ operation: ControlOperation, cause: String? = nil) -> Int {
        let token = nextToken
        nextToken += 1
        inFlight[token] = op
        emit(.send(token: token, operation, cause: cause))
        return token
    }

    mutating func setDeviceStatus(_ s: MPNDevice.Status, timestamp: Int64?) {
        let changed = s != deviceStatus
        deviceStatus = s
        deviceTimestamp = timestamp
        emit(.deviceState(s, timestamp: timestamp, deviceId: deviceId))
        if changed { emit(.deviceEvent(.status(s, timestamp: timestamp ?? 0))) }
    }

    mutating func registered(deviceId id: String, adapter: String) {
        guard registrationsAwaited > 0, let d = device else { return }
        registrationsAwaited -= 1
        if let old = deviceId, old != id || adapterName != adapter {
            registeredInSession = false
            emit(.deviceEvent(.registrationFailed(code: 62, message: "DeviceId or Adapter Name has unexpectedly been changed")))
            setDeviceStatus(.UNKNOWN, timestamp: 0)
            return
        }
        deviceId = id
        adapterName = adapter
        registeredToken = d.token
        registeredInSession = true
        emit(.deviceState(deviceStatus == .UNKNOWN ? .REGISTERED : deviceStatus, timestamp: deviceTimestamp ?? 0, deviceId: id))
        emit(.deviceEvent(.registered))
        if deviceStatus == .UNKNOWN { setDeviceStatus(.REGISTERED, timestamp: 0) }
        if !internalSubscribed {
            internalSubscribed = true
            snapshotComplete = false
            emit(.subscribeInternal(deviceId: id, adapter: adapter))
        }
        flushWaiting()
    }

    mutating func deviceItemUpdated(status: String?, timestamp: String?) {
        let ts = timestamp.flatMap { Int64($0) } ?? deviceTimestamp
        switch status {
        case "ACTIVE"?:
            let was = deviceStatus
            setDeviceStatus(.REGISTERED, timestamp: ts)
            if was == .SUSPENDED { emit(.deviceEvent(.resumed)) }
        case "SUSPENDED"?:
            let was = deviceStatus
            setDeviceStatus(.SUSPENDED, timestamp: ts)
            if was != .SUSPENDED { emit(.deviceEvent(.suspended)) }
        default:
            break
        }
    }

    mutating func internalFailed(code: Int, message: String?) {
        emit(
            .deviceEvent(.registrationFailed(code: 62, message: "MPN device activation can't be completed (62/\(code)): \(message ?? "")")))
    }

    // MARK: notifications and replies

    mutating func notificationReceived(_ n: TLCPNotification) {
        switch n {
        case .mpnreg(let id, let adapter): registered(deviceId: id, adapter: adapter)
        case .mpnok(let subId, let mpnId): activated(subId: subId, mpnId: mpnId)
        case .mpndel(let mpnId): deleted(mpnId: mpnId)
        case .mpnzero(let id): if id == deviceId { emit(.deviceEvent(.badgeReset)) }
        case .mpnconf: break // the new values come on the SUB- item
        default: break
        }
    }

    mutating func replyReceived(token: Int, code: Int?, message: String?) {
        guard let op = inFlight.removeValue(forKey: token) else { return }
        // REQOK: the outcome comes with MPNREG/MPNOK/MPNDEL/MPNZERO or the SUB- item.
        guard let code else { return }
        abort(op, code: code, message: message)
    }

    /// A request failed (REQERR) or was lost with its session.
    mutating func abort(_ op: PendingMPNOperation, code: Int, message: String?) {
        switch op {
        case .register:
            registrationsAwaited = max(0, registrationsAwaited - 1)
            guard code != 54 else { return } // lost with the session: the new session registers again
            emit(.deviceEvent(.registrationFailed(code: code, message: message)))
            setDeviceStatus(.UNKNOWN, timestamp: 0)
        case .resetBadge:
            emit(.deviceEvent(.badgeResetFailed(code: code, message: message)))
        case .activate(let key, _):
            guard var s = subscriptions[key], s.status != .UNKNOWN else { return }
            s.activationSubId = nil
            s.activationToken = nil
            s.status = .UNKNOWN
            s.id = nil
            subscriptions[key] = s
            emit(.subscriptionState(key: key, s))
            emit(
                .subscriptionEvents(
                    key: key, [.status(.UNKNOWN, timestamp: s.timestamp), .subscriptionFailed(code: code, message: message)]))
        case .deactivate(let key):
            emit(.subscriptionEvents(key: key, [.unsubscriptionFailed(code: code, message: message)]))
        case .deactivateFilter(let filter):
            for key in subscriptions.keys.sorted() where matches(subscriptions[key], filter) {
                emit(.subscriptionEvents(key: key, [.unsubscriptionFailed(code: code, message: message)]))
            }
        case .reconf(let key, let m):
            emit(.subscriptionEvents(key: key, [.modificationFailed(code: code, message: message, property: m.propertyName)]))
        }
    }

    // MARK: operations that need a registered device

    mutating func perform(_ op: PendingMPNOperation) {
        if registeredInSession { execute(op) } else { waiting.append(op) }
    }

    mutating func flushWaiting() {
        let ops = waiting
        waiting = []
        for op in ops { execute(op) }
    }

    mutating func execute(_ op: PendingMPNOperation) {
        guard let deviceId else {
            waiting.append(op)
            return
        }
        switch op {
        case .register:
            sendRegister(cause: nil)
        case .resetBadge:
            send(op, .mpnResetBadge(deviceId: deviceId))
        case .activate(let key, let coalescing):
            sendActivation(key: key, coalescing: coalescing, deviceId: deviceId)
        case .deactivate(let key):
            guard let id = subscriptions[key]?.id else { return }
            send(op, .mpnDeactivate(deviceId: deviceId, target: .subscription(id)))
        case .deactivateFilter(let f):
            let target: MPNDeactivateTarget
            switch f {
            case .ALL: target = .all
            case .SUBSCRIBED: target = .status(.active)
            case .TRIGGERED: target = .status(.triggered)
            }
            send(op, .mpnDeactivate(deviceId: deviceId, target: target))
        case .reconf(let key, let m):
            sendReconf(key: key, m, deviceId: deviceId)
        }
    }
}

/// An MPN operation waiting for the device, or sent and awaiting its reply.
enum PendingMPNOperation: Sendable, Equatable {
    case register
    case resetBadge
    case activate(key: Int, coalescing: Bool)
    case deactivate(key: Int)
    case deactivateFilter(LightstreamerClient.MPNSubscriptionStatus)
    case reconf(key: Int, MPNEngine.Modification)
}
