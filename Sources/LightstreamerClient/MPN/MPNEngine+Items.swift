import TLCP

/// The internal items: `SUBS-<deviceId>` (COMMAND, one key `SUB-<mpnId>` per MPN subscription of
/// the device) with its second-level `SUB-<mpnId>` values, and `DEV-<deviceId>` (in
/// `MPNEngine.deviceItemUpdated`).
extension MPNEngine {
    static let secondLevelFields = [
        "status", "status_timestamp", "notification_format", "trigger", "group", "schema", "adapter",
        "mode", "requested_buffer_size", "requested_max_frequency",
    ]

    mutating func subscriptionsItemUpdated(key: String, command: String?, values: [String: String?]) {
        guard key.hasPrefix("SUB-") else { return }
        let id = String(key.dropFirst(4))
        guard !id.isEmpty else { return }
        if command == "DELETE" {
            knownServerIds.remove(id)
            let wasAwaited = awaitingFirstValues.remove(id) != nil
            for k in subscriptions.keys.sorted() where subscriptions[k]?.id == id { becameInactive(key: k) }
            if snapshotComplete, awaitingFirstValues.isEmpty || !wasAwaited { emit(.deviceEvent(.subscriptionsUpdated)) }
            return
        }
        if !snapshotComplete { seenInSnapshot.insert(id) }
        if knownServerIds.insert(id).inserted { awaitingFirstValues.insert(id) }
        guard let status = values["status"] ?? nil else { return }
        let wasAwaited = awaitingFirstValues.remove(id) != nil
        var keys = subscriptions.keys.sorted().filter { subscriptions[$0]?.id == id }
        if keys.isEmpty {
            let k = nextServerKey
            nextServerKey -= 1
            subscriptions[k] = MPNEngine.SubscriptionState(status: .UNKNOWN, id: id, userMade: false)
            emit(.createSubscription(key: k))
            keys = [k]
        }
        for k in keys { applyServerValues(key: k, status: status, values: values) }
        if snapshotComplete, wasAwaited, awaitingFirstValues.isEmpty { emit(.deviceEvent(.subscriptionsUpdated)) }
    }

    /// The SUBS- item was (re)subscribed, e.g. in a new session: its snapshot follows.
    mutating func subscriptionsRestarted() {
        snapshotComplete = false
        seenInSnapshot = []
    }

    mutating func subscriptionsSnapshotEnded() {
        guard !snapshotComplete else { return }
        snapshotComplete = true
        // Subscriptions deleted while no session was watching are missing from a new snapshot.
        for id in knownServerIds.subtracting(seenInSnapshot).sorted() {
            knownServerIds.remove(id)
            awaitingFirstValues.remove(id)
            for k in subscriptions.keys.sorted() where subscriptions[k]?.id == id { becameInactive(key: k) }
        }
        // Objects of an ended session whose id the new snapshot does not list.
        for k in subscriptions.keys.sorted() {
            guard let sub = subscriptions[k], sub.disconnected, let id = sub.id, !seenInSnapshot.contains(id) else { continue }
            forgetDisconnected(key: k)
        }
        if awaitingFirstValues.isEmpty { emit(.deviceEvent(.subscriptionsUpdated)) }
    }

    mutating func applyServerValues(key: Int, status: String, values: [String: String?]) {
        guard var s = subscriptions[key] else { return }
        func v(_ name: String) -> String? { values[name] ?? nil }
        let new = MPNEngine.ServerValues(
            format: v("notification_format"), trigger: v("trigger"), group: v("group"), schema: v("schema"),
            adapter: v("adapter"), mode: v("mode"), bufferSize: v("requested_buffer_size"),
            maxFrequency: v("requested_max_frequency"))
        let old = s.server
        var events: [MPNEngine.SubscriptionEvent] = []
        let pairs: [(String, KeyPath<MPNEngine.ServerValues, String?>)] = [
            ("mode", \.mode), ("group", \.group), ("schema", \.schema), ("adapter", \.adapter),
            ("notification_format", \.format), ("trigger", \.trigger), ("requested_buffer_size", \.bufferSize),
            ("requested_max_frequency", \.maxFrequency),
        ]
        for (name, path) in pairs where old?[keyPath: path] != new[keyPath: path] {
            if old == nil && new[keyPath: path] == nil { continue }
            events.append(.property(name))
        }
        s.server = new
        let ts = v("status_timestamp").flatMap { Int64($0) } ?? s.timestamp
        if ts != s.timestamp {
            s.timestamp = ts
            events.append(.property("status_timestamp"))
        }
        let newStatus: MPNSubscription.Status
        switch status {
        case "TRIGGERED": newStatus = .TRIGGERED
        case "ACTIVE": newStatus = .SUBSCRIBED
        default: newStatus = s.status == .UNKNOWN ? .SUBSCRIBED : s.status
        }
        let oldStatus = s.status
        // Back after a new session (it went UNKNOWN when the previous one ended).
        let restored = s.disconnected
        s.disconnected = false
        s.status = newStatus
        subscriptions[key] = s
        emit(.subscriptionState(key: key, s))
        if oldStatus != newStatus {
            events.append(.status(newStatus, timestamp: ts))
            if newStatus == .TRIGGERED { events.append(.triggered) }
            if (oldStatus == .ACTIVE && s.userMade) || restored { events.append(.subscribed) }
        }
        if !events.isEmpty { emit(.subscriptionEvents(key: key, events)) }
    }
}
