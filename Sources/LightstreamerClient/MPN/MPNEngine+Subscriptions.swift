import TLCP

/// MPN subscriptions: activate (`subscribeMPN`), pn_reconf, deactivate, MPNOK and MPNDEL.
extension MPNEngine {
    mutating func subscribeRequested(key: Int, _ request: MPNRequest, coalescing: Bool) {
        var s = subscriptions[key] ?? MPNEngine.SubscriptionState(userMade: true)
        guard s.status == .UNKNOWN else { return }
        s.userMade = true
        s.request = request
        s.status = .ACTIVE
        s.id = nil
        s.server = nil
        s.pendingFormat = nil
        s.pendingTrigger = nil
        s.deactivateAfterActivation = false
        s.disconnected = false
        subscriptions[key] = s
        emit(.subscriptionState(key: key, s))
        emit(.subscriptionEvents(key: key, [.status(.ACTIVE, timestamp: s.timestamp)]))
        perform(.activate(key: key, coalescing: coalescing))
    }

    mutating func sendActivation(key: Int, coalescing: Bool, deviceId: String) {
        guard var s = subscriptions[key], s.status == .ACTIVE, let r = s.request, let group = r.group, let schema = r.schema,
            let format = r.format
        else { return }
        // LS_subId 0 is a placeholder: the session engine numbers the request with the
        // subscription counter when it builds it, and reports the id (subscriptionIdAssigned).
        let params = MPNActivateParameters(
            subscriptionId: 0, mode: r.mode.wire, group: group, schema: schema,
            dataAdapter: r.dataAdapter, bufferSize: r.bufferSize?.wire,
            maxFrequency: r.maxFrequency?.wire, deviceId: deviceId, notificationFormat: format,
            trigger: r.trigger, coalescing: coalescing ? true : nil)
        let token = send(.activate(key: key, coalescing: coalescing), .mpnActivate(params))
        s.activationToken = token
        s.activationSubId = nil
        subscriptions[key] = s
    }

    mutating func activated(subId: Int, mpnId: String) {
        guard let key = subscriptions.keys.sorted().first(where: { subscriptions[$0]?.activationSubId == subId }),
            var s = subscriptions[key]
        else { return }
        s.activationSubId = nil
        s.activationToken = nil
        s.id = mpnId
        s.status = .SUBSCRIBED
        let format = s.pendingFormat
        let trigger = s.pendingTrigger
        let deactivate = s.deactivateAfterActivation
        s.pendingFormat = nil
        s.pendingTrigger = nil
        s.deactivateAfterActivation = false
        // The SUB- item may have shown this subscription first: the user's object takes over.
        var extra: [MPNEngine.SubscriptionEvent] = []
        for other in subscriptions.keys.sorted() where other != key {
            guard let o = subscriptions[other], o.id == mpnId, !o.userMade else { continue }
            s.server = o.server
            s.timestamp = o.timestamp
            if o.status == .TRIGGERED {
                s.status = .TRIGGERED
                extra = [.status(.TRIGGERED, timestamp: o.timestamp), .triggered]
            }
            subscriptions.removeValue(forKey: other)
            emit(.removeSubscription(key: other))
        }
        subscriptions[key] = s
        for (token, op) in inFlight where op == .activate(key: key, coalescing: true) || op == .activate(key: key, coalescing: false) {
            inFlight.removeValue(forKey: token)
        }
        emit(.subscriptionState(key: key, s))
        emit(.subscriptionEvents(key: key, [.status(.SUBSCRIBED, timestamp: s.timestamp), .subscribed] + extra))
        if deactivate {
            perform(.deactivate(key: key))
            return
        }
        if let format { perform(.reconf(key: key, .format(format))) }
        if let trigger { perform(.reconf(key: key, .trigger(trigger))) }
    }

    mutating func unsubscribeRequested(key: Int) {
        guard var s = subscriptions[key], s.status != .UNKNOWN else { return }
        if s.id != nil {
            perform(.deactivate(key: key))
        } else if s.activationSubId != nil || s.activationToken != nil {
            s.deactivateAfterActivation = true
            subscriptions[key] = s
        } else {
            // Not sent yet: forget the activation.
            waiting.removeAll { $0 == .activate(key: key, coalescing: true) || $0 == .activate(key: key, coalescing: false) }
            becameInactive(key: key)
        }
    }

    mutating func unsubscribeFilterRequested(_ filter: LightstreamerClient.MPNSubscriptionStatus) {
        perform(.deactivateFilter(filter))
    }

    func matches(_ s: MPNEngine.SubscriptionState?, _ filter: LightstreamerClient.MPNSubscriptionStatus) -> Bool {
        guard let s else { return false }
        switch filter {
        case .ALL: return s.status == .SUBSCRIBED || s.status == .TRIGGERED
        case .SUBSCRIBED: return s.status == .SUBSCRIBED
        case .TRIGGERED: return s.status == .TRIGGERED
        }
    }

    mutating func modifyRequested(key: Int, _ m: MPNEngine.Modification) {
        guard var s = subscriptions[key], s.status != .UNKNOWN else { return }
        if s.id == nil {
            switch m {
            case .format(let f): s.pendingFormat = .some(f)
            case .trigger(let t): s.pendingTrigger = .some(t)
            }
            subscriptions[key] = s
            return
        }
        perform(.reconf(key: key, m))
    }

    mutating func sendReconf(key: Int, _ m: MPNEngine.Modification, deviceId: String) {
        guard let s = subscriptions[key], let id = s.id else { return }
        let mode = s.server?.mode.flatMap(MPNSubscription.Mode.init(rawValue:))?.wire ?? s.request?.mode.wire
        let group = s.server?.group ?? s.request?.group
        let schema = s.server?.schema ?? s.request?.schema
        let adapter = s.server?.adapter ?? s.request?.dataAdapter
        var params = MPNReconfParameters(
            deviceId: deviceId, mpnSubscriptionId: id, mode: mode, group: group, schema: schema,
            dataAdapter: adapter)
        switch m {
        case .format(let f):
            guard let f else {
                emit(
                    .subscriptionEvents(
                        key: key,
                        [
                            .modificationFailed(
                                code: 53, message: "The notification format is empty",
                                property: m.propertyName)
                        ]))
                return
            }
            params.notificationFormat = f
        case .trigger(let t):
            params.trigger = t ?? ""
        }
        send(.reconf(key: key, m), .mpnReconf(params))
    }

    /// MPNDEL: every object with that id becomes inactive; server-made ones leave the list.
    mutating func deleted(mpnId: String) {
        for key in subscriptions.keys.sorted() where subscriptions[key]?.id == mpnId {
            becameInactive(key: key)
        }
        for (token, op) in inFlight {
            if case .deactivate(let key) = op, subscriptions[key]?.id == nil { inFlight.removeValue(forKey: token) }
        }
    }

    /// The session ended: subscriptions known to the server (SUBSCRIBED or TRIGGERED) are no
    /// longer active for the client (status UNKNOWN, `isActive` false; no `didUnsubscribe`,
    /// they were not unsubscribed). Each object keeps its id, so that the `SUBS-` snapshot of
    /// the next registration finds it again and gives it back its status; ones missing from
    /// that snapshot go away (`subscriptionsSnapshotEnded`).
    mutating func disconnectSubscriptions() {
        for key in subscriptions.keys.sorted() {
            guard var s = subscriptions[key], s.id != nil, s.status == .SUBSCRIBED || s.status == .TRIGGERED else { continue }
            s.status = .UNKNOWN
            s.disconnected = true
            subscriptions[key] = s
            emit(.subscriptionState(key: key, s))
            emit(.subscriptionEvents(key: key, [.status(.UNKNOWN, timestamp: s.timestamp)]))
        }
    }

    mutating func becameInactive(key: Int) {
        if let s = subscriptions[key], s.disconnected {
            forgetDisconnected(key: key)
            return
        }
        guard var s = subscriptions[key], s.status != .UNKNOWN else { return }
        s.status = .UNKNOWN
        s.id = nil
        s.activationSubId = nil
        s.activationToken = nil
        if s.userMade {
            subscriptions[key] = s
            emit(.subscriptionState(key: key, s))
            emit(.subscriptionEvents(key: key, [.status(.UNKNOWN, timestamp: s.timestamp), .unsubscribed]))
        } else {
            subscriptions.removeValue(forKey: key)
            emit(.subscriptionState(key: key, s))
            emit(.subscriptionEvents(key: key, [.status(.UNKNOWN, timestamp: s.timestamp), .unsubscribed]))
            emit(.removeSubscription(key: key))
        }
    }

    /// A subscription of an ended session that the server no longer has: it leaves the list
    /// (a server-made object is dropped, an application's object loses its id).
    mutating func forgetDisconnected(key: Int) {
        guard var s = subscriptions[key], s.disconnected else { return }
        s.disconnected = false
        s.id = nil
        s.server = nil
        emit(.subscriptionState(key: key, s))
        emit(.subscriptionEvents(key: key, [.unsubscribed]))
        if s.userMade {
            subscriptions[key] = s
        } else {
            subscriptions.removeValue(forKey: key)
            emit(.removeSubscription(key: key))
        }
    }
}
