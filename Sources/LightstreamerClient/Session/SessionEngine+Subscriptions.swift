import TLCP

/// Subscriptions: add/delete/reconf requests, SUBOK/UNSUB/U/EOS/CS/OV/CONF handling and the
/// second-level subscriptions of two-level COMMAND.
extension SessionEngine {
    mutating func subscribeRequested(key: Int, spec: SessionEngine.SubscriptionSpec) {
        subscriptions[key] = EngineSubscription(key: key, spec: spec)
        if session != nil { activate(key) }
    }

    /// Gives the subscription an id in the current session and queues its `add`.
    mutating func activate(_ key: Int) {
        guard var sub = subscriptions[key], sub.phase == .waiting else { return }
        let subId = nextSubscriptionID
        nextSubscriptionID += 1
        sub.subscriptionId = subId
        sub.phase = .subscribing
        subscriptions[key] = sub
        subscriptionKeyByID[subId] = key
        enqueueControl(.add(key: key))
    }

    mutating func resubscribeAll() {
        for key in subscriptions.keys.sorted(by: { abs($0) < abs($1) }) where key >= 0 { activate(key) }
    }

    mutating func unsubscribeRequested(key: Int) {
        guard var sub = subscriptions[key] else { return }
        removeChildren(of: key)
        switch sub.phase {
        case .waiting:
            subscriptions.removeValue(forKey: key)
        case .subscribing, .subscribed:
            guard let subId = sub.subscriptionId else {
                subscriptions.removeValue(forKey: key)
                return
            }
            if let i = controlQueue.firstIndex(of: .add(key: key)) {
                // Never sent: forget it.
                controlQueue.remove(at: i)
                subscriptions.removeValue(forKey: key)
                subscriptionKeyByID.removeValue(forKey: subId)
                return
            }
            sub.phase = .unsubscribing
            subscriptions[key] = sub
            enqueueControl(.delete(subscriptionId: subId, key: key))
        case .unsubscribing:
            break
        }
    }

    mutating func frequencyChangeRequested(key: Int, frequency: RequestedFrequency?) {
        guard var sub = subscriptions[key] else { return }
        sub.spec.maxFrequency = frequency
        subscriptions[key] = sub
        if sub.phase == .subscribed { enqueueControl(.reconf(key: key)) }
    }

    /// The session is gone: subscriptions wait for the next one; second-level ones are dropped.
    mutating func subscriptionsLostSession() {
        subscriptionKeyByID.removeAll()
        for key in subscriptions.keys.sorted() {
            guard var sub = subscriptions[key] else { continue }
            if sub.isInternal || sub.phase == .unsubscribing {
                let wasVisible = !sub.isInternal && sub.wasSubscribed && !sub.silentDelete
                subscriptions.removeValue(forKey: key)
                if wasVisible { notify(.subscription(key: key, .unsubscribed)) }
                continue
            }
            let was = sub.wasSubscribed
            sub.phase = .waiting
            sub.subscriptionId = nil
            sub.wasSubscribed = false
            sub.items = []
            sub.secondLevelWidth = 0
            subscriptions[key] = sub
            if was { notify(.subscription(key: key, .unsubscribed)) }
        }
    }

    // MARK: notifications

    mutating func subscriptionConfirmed(_ subId: Int, items: Int, fields: Int, keyPos: Int?, commandPos: Int?) {
        guard let key = subscriptionKeyByID[subId], var sub = subscriptions[key], sub.phase == .subscribing else { return }
        if let problem = sub.countProblem(items: items, fields: fields, keyPos: keyPos, commandPos: commandPos) {
            failSubscription(key, code: 61, message: problem)
            return
        }
        sub.confirm(items: items, fields: fields, keyPos: keyPos, commandPos: commandPos)
        subscriptions[key] = sub
        if let link = sub.parent {
            if var parent = subscriptions[link.key], parent.secondLevelWidth < fields {
                parent.secondLevelWidth = fields
                subscriptions[link.key] = parent
            }
        } else {
            notify(
                .subscription(
                    key: key,
                    .subscribed(
                        itemCount: items, fieldCount: fields, keyPosition: keyPos,
                        commandPosition: commandPos)))
        }
    }

    /// A subscription error found by the client (61): tell the application, delete it.
    mutating func failSubscription(_ key: Int, code: Int, message: String) {
        guard var sub = subscriptions[key] else { return }
        removeChildren(of: key)
        if let subId = sub.subscriptionId, sub.phase == .subscribing || sub.phase == .subscribed {
            sub.phase = .unsubscribing
            sub.silentDelete = true
            subscriptions[key] = sub
            enqueueControl(.delete(subscriptionId: subId, key: key))
        } else {
            subscriptions.removeValue(forKey: key)
        }
        reportFailure(sub, code: code, message: message)
    }

    mutating func reportFailure(_ sub: EngineSubscription, code: Int, message: String?) {
        if let link = sub.parent {
            if var parent = subscriptions[link.key], link.item >= 1, link.item <= parent.items.count {
                parent.items[link.item - 1].children.removeValue(forKey: link.commandKey)
                subscriptions[link.key] = parent
            }
            notify(.subscription(key: link.key, .secondLevelFailed(key: link.commandKey, code: code, message: message)))
        } else {
            notify(.subscription(key: sub.key, .failed(code: code, message: message)))
        }
    }

    /// REQERR to an add.
    mutating func subscriptionRefused(key: Int, code: Int, message: String) {
        guard let sub = subscriptions.removeValue(forKey: key) else { return }
        if let id = sub.subscriptionId { subscriptionKeyByID.removeValue(forKey: id) }
        removeChildren(of: key)
        reportFailure(sub, code: code, message: message)
    }

    /// REQERR to a delete: the subscription is gone anyway.
    mutating func subscriptionDeleteFailed(key: Int) {
        guard let sub = subscriptions[key], sub.phase == .unsubscribing else { return }
        subscriptions.removeValue(forKey: key)
        if let id = sub.subscriptionId { subscriptionKeyByID.removeValue(forKey: id) }
        if !sub.isInternal && sub.wasSubscribed && !sub.silentDelete { notify(.subscription(key: key, .unsubscribed)) }
    }

    mutating func unsubscriptionConfirmed(_ subId: Int) {
        guard let key = subscriptionKeyByID.removeValue(forKey: subId), let sub = subscriptions.removeValue(forKey: key) else { return }
        removeChildren(of: key)
        if !sub.isInternal && sub.wasSubscribed && !sub.silentDelete { notify(.subscription(key: key, .unsubscribed)) }
    }

    /// The U line `line` that `updateTokens` holds the tokens of.
    mutating func updateReceived(line: UnsafeBufferPointer<UInt8>) {
        let tokens = updateTokens
        let key: Int
        if let last = lastUpdateKey, last.subscriptionId == tokens.subscriptionId {
            key = last.key
        } else {
            guard let k = subscriptionKeyByID[tokens.subscriptionId] else { return }
            key = k
            lastUpdateKey = (tokens.subscriptionId, k)
        }
        guard let index = subscriptions.index(forKey: key) else { return }
        // In place through the dictionary's `values` (one hash lookup, no move of the
        // subscription in and out of an optional), the parent link read in the same access.
        let (result, parent) = subscriptions.values[index].applyNotingParent(tokens: tokens, line: line)
        switch result {
        case .ignore:
            return
        case .deliver(let update):
            if let link = parent {
                secondLevelUpdate(link, update)
            } else {
                notify(.subscription(key: key, .update(update)))
            }
        case .command(let update, let rowKey, let added, let deleted):
            notify(.subscription(key: key, .update(update)))
            guard let sub = subscriptions[key], sub.spec.hasSecondLevel else { return }
            if added { addChild(parentKey: key, item: update.itemPos, commandKey: rowKey) }
            if deleted { removeChild(parentKey: key, item: update.itemPos, commandKey: rowKey) }
        case .failure(let message):
            failSubscription(key, code: 61, message: message)
        }
    }

    mutating func secondLevelUpdate(_ link: EngineSubscription.ParentLink, _ update: ItemUpdateValue) {
        // In place through `values[index]`, as in `updateReceived`.
        guard let index = subscriptions.index(forKey: link.key),
            let merged = subscriptions.values[index].applySecondLevel(
                item: link.item, commandKey: link.commandKey,
                values: update.values, changed: update.changed)
        else { return }
        notify(.subscription(key: link.key, .update(merged)))
    }

    mutating func endOfSnapshotReceived(_ subId: Int, item: Int) {
        guard let key = subscriptionKeyByID[subId], var sub = subscriptions[key], sub.phase == .subscribed,
            item >= 1, item <= sub.items.count
        else { return }
        sub.items[item - 1].inSnapshot = false
        subscriptions[key] = sub
        if !sub.isInternal { notify(.subscription(key: key, .endOfSnapshot(itemName: sub.itemName(item), itemPos: item))) }
    }

    mutating func clearSnapshotReceived(_ subId: Int, item: Int) {
        guard let key = subscriptionKeyByID[subId], var sub = subscriptions[key], sub.phase == .subscribed,
            item >= 1, item <= sub.items.count
        else { return }
        let children = sub.items[item - 1].children
        sub.items[item - 1].rows = [:]
        sub.items[item - 1].children = [:]
        subscriptions[key] = sub
        for (_, child) in children.sorted(by: { $0.key < $1.key }) { unsubscribeRequested(key: child) }
        if !sub.isInternal { notify(.subscription(key: key, .clearSnapshot(itemName: sub.itemName(item), itemPos: item))) }
    }

    mutating func overflowReceived(_ subId: Int, item: Int, lost: Int) {
        guard let key = subscriptionKeyByID[subId], let sub = subscriptions[key] else { return }
        if let link = sub.parent {
            notify(.subscription(key: link.key, .secondLevelLostUpdates(key: link.commandKey, count: lost)))
        } else {
            notify(.subscription(key: key, .lostUpdates(itemName: sub.itemName(item), itemPos: item, count: lost)))
        }
    }

    mutating func confReceived(_ subId: Int, frequency: GrantedFrequency) {
        guard let key = subscriptionKeyByID[subId], let sub = subscriptions[key], !sub.isInternal else { return }
        let real: RealMaxFrequency
        switch frequency {
        case .unlimited: real = .unlimited
        case .limited(let f): real = .limited(f)
        }
        notify(.subscription(key: key, .realFrequency(real)))
    }

    // MARK: two-level COMMAND

    mutating func addChild(parentKey: Int, item: Int, commandKey: String) {
        guard let parent = subscriptions[parentKey], item >= 1, item <= parent.items.count,
            parent.items[item - 1].children[commandKey] == nil
        else { return }
        guard Subscription.isValidItemName(commandKey) else {
            notify(.subscription(key: parentKey, .secondLevelFailed(key: commandKey, code: 14, message: "Invalid second-level item name")))
            return
        }
        var spec = SessionEngine.SubscriptionSpec(mode: .merge)
        spec.items = [commandKey]
        spec.fields = parent.spec.secondLevelFields
        spec.fieldSchema = parent.spec.secondLevelFields == nil ? parent.spec.secondLevelFieldSchema : nil
        spec.dataAdapter = parent.spec.secondLevelDataAdapter
        spec.snapshot = .yes
        spec.maxFrequency = parent.spec.maxFrequency
        let childKey = nextInternalKey
        nextInternalKey -= 1
        subscriptions[childKey] = EngineSubscription(
            key: childKey, spec: spec, parent: .init(key: parentKey, item: item, commandKey: commandKey))
        subscriptions[parentKey]?.items[item - 1].children[commandKey] = childKey
        activate(childKey)
    }

    mutating func removeChild(parentKey: Int, item: Int, commandKey: String) {
        guard let childKey = subscriptions[parentKey]?.items[item - 1].children.removeValue(forKey: commandKey) else { return }
        unsubscribeRequested(key: childKey)
    }

    mutating func removeChildren(of key: Int) {
        guard let sub = subscriptions[key], sub.spec.hasSecondLevel else { return }
        var children: [Int] = []
        for i in sub.items.indices {
            children.append(contentsOf: sub.items[i].children.values)
            subscriptions[key]?.items[i].children = [:]
        }
        for child in children.sorted(by: >) { unsubscribeRequested(key: child) }
    }
}

extension SessionEngine.SubscriptionSpec {
    init(mode: SubscriptionMode) {
        self.init(
            mode: mode, items: nil, itemGroup: nil, fields: nil, fieldSchema: nil, dataAdapter: nil, selector: nil,
            bufferSize: nil, maxFrequency: nil, snapshot: nil, secondLevelFields: nil, secondLevelFieldSchema: nil,
            secondLevelDataAdapter: nil)
    }
}
