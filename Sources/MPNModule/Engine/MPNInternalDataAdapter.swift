import LightstreamerServer
import NIOConcurrencyHelpers
import TLCP

/// The internal MPN Data Adapter (`MPN_INTERNAL_DATA_ADAPTER` by default) that official clients
/// subscribe to after `MPNREG` (docs/protocol/TLCP.md §3.6), kept live by the `MPNModule`:
/// - `DEV-<deviceId>` (MERGE): `status`, `status_timestamp`;
/// - `SUBS-<deviceId>` (COMMAND): `key` = `SUB-<mpnSubscriptionId>`, `command` ADD/DELETE;
/// - `SUB-<mpnSubscriptionId>` (MERGE): `status status_timestamp notification_format trigger
///   group schema adapter mode requested_buffer_size requested_max_frequency`.
///
/// Add one instance to every adapter set with MPN enabled (under `name`) before building the
/// `ItemEngine`, then hand it to the `MPNModule`. Snapshots are served from the module's state.
public final class MPNInternalDataAdapter: DataAdapter, ServerOwnedItemRules {
    public static let defaultName = "MPN_INTERNAL_DATA_ADAPTER"
    public static let subscriptionFields = [
        "status", "status_timestamp", "notification_format", "trigger", "group", "schema",
        "adapter", "mode", "requested_buffer_size", "requested_max_frequency",
    ]

    private struct State {
        var listeners: [any ItemEventListener] = []
        var subscribed: [String: Int] = [:]
        var devices: [String: [String: String?]] = [:]
        /// deviceId → subscription ids, in activation order.
        var deviceSubscriptions: [String: [String]] = [:]
        var subscriptions: [String: [String: String?]] = [:]
        /// subscription id → device id.
        var subscriptionDevice: [String: String] = [:]
        /// deviceId → publications by the module (`revisions`).
        var revisions: [String: UInt64] = [:]
    }

    private let state = NIOLockedValueBox(State())
    /// The devices registered in each session: who may read which items.
    let sessions = MPNSessionDevices()

    public init() {}

    // MARK: Authorization (MPNInternalItemRules)

    public func metadata(consulting application: any MetadataAdapter) -> any MetadataAdapter {
        MPNInternalItemRules(application: application, access: sessions) { [weak self] item in self?.device(ofItem: item) }
    }

    /// The device an internal item belongs to, nil for an unknown item.
    func device(ofItem item: String) -> String? {
        state.withLockedValue { s in
            if item.hasPrefix("DEV-") {
                let d = String(item.dropFirst(4))
                return s.devices[d] != nil ? d : nil
            }
            if item.hasPrefix("SUBS-") {
                let d = String(item.dropFirst(5))
                return s.devices[d] != nil || s.deviceSubscriptions[d] != nil ? d : nil
            }
            if item.hasPrefix("SUB-") { return s.subscriptionDevice[String(item.dropFirst(4))] }
            return nil
        }
    }

    // MARK: DataAdapter

    public func setListener(_ listener: any ItemEventListener) {
        state.withLockedValue { $0.listeners.append(listener) }
    }

    public func subscribe(item: String) async throws {
        state.withLockedValue { s in
            s.subscribed[item, default: 0] += 1
            for listener in s.listeners {
                for fields in Self.snapshot(of: item, in: s) { listener.update(item: item, fields: fields, isSnapshot: true) }
                listener.endOfSnapshot(item: item)
            }
        }
    }

    public func unsubscribe(item: String) async {
        state.withLockedValue { s in
            if let n = s.subscribed[item], n > 1 { s.subscribed[item] = n - 1 } else { s.subscribed.removeValue(forKey: item) }
        }
    }

    public func isSnapshotAvailable(item: String) -> Bool { true }

    /// The snapshot events of an internal item (none for unknown items).
    private static func snapshot(of item: String, in s: State) -> [[String: String?]] {
        if item.hasPrefix("DEV-"), let fields = s.devices[String(item.dropFirst(4))] { return [fields] }
        if item.hasPrefix("SUBS-") {
            return (s.deviceSubscriptions[String(item.dropFirst(5))] ?? []).map { ["key": "SUB-" + $0, "command": "ADD"] }
        }
        if item.hasPrefix("SUB-"), let fields = s.subscriptions[String(item.dropFirst(4))] { return [fields] }
        return []
    }

    // MARK: Publishing (called by the module)

    private func emit(_ s: State, _ item: String, _ fields: [String: String?]) {
        guard s.subscribed[item] != nil else { return }
        for listener in s.listeners { listener.update(item: item, fields: fields, isSnapshot: false) }
    }

    static func fields(of d: MPNDeviceRecord) -> [String: String?] {
        ["status": d.status.rawValue, "status_timestamp": String(d.statusTimestamp)]
    }

    func publish(device d: MPNDeviceRecord) {
        state.withLockedValue { s in
            s.revisions[d.id, default: 0] &+= 1
            setDevice(&s, d.id, Self.fields(of: d))
        }
    }

    static func fields(of r: MPNSubscriptionRecord) -> [String: String?] {
        [
            "status": r.status.rawValue,
            "status_timestamp": String(r.statusTimestamp),
            "notification_format": r.notificationFormat,
            "trigger": r.trigger,
            "group": r.group,
            "schema": r.schema,
            "adapter": r.dataAdapter,
            "mode": r.mode.rawValue,
            "requested_buffer_size": r.bufferSize?.wireValue,
            "requested_max_frequency": r.maxFrequency?.wireValue,
        ]
    }

    func publish(subscription r: MPNSubscriptionRecord) {
        state.withLockedValue { s in
            s.revisions[r.deviceId, default: 0] &+= 1
            setSubscription(&s, r.id, deviceId: r.deviceId, Self.fields(of: r))
        }
    }

    func remove(subscriptionId id: String, deviceId: String) {
        state.withLockedValue { s in
            s.revisions[deviceId, default: 0] &+= 1
            removeSubscription(&s, id, deviceId: deviceId)
        }
    }

    func remove(deviceId: String) {
        state.withLockedValue { s in
            s.revisions[deviceId, default: 0] &+= 1
            removeDevice(&s, deviceId)
        }
    }

    // MARK: State changes (under the lock)

    private func setDevice(_ s: inout State, _ id: String, _ fields: [String: String?]) {
        s.devices[id] = fields
        if s.deviceSubscriptions[id] == nil { s.deviceSubscriptions[id] = [] }
        emit(s, "DEV-" + id, fields)
    }

    private func setSubscription(_ s: inout State, _ id: String, deviceId: String, _ fields: [String: String?]) {
        let isNew = s.subscriptions[id] == nil
        s.subscriptions[id] = fields
        s.subscriptionDevice[id] = deviceId
        if !(s.deviceSubscriptions[deviceId] ?? []).contains(id) {
            s.deviceSubscriptions[deviceId, default: []].append(id)
        }
        emit(s, "SUB-" + id, fields)
        if isNew { emit(s, "SUBS-" + deviceId, ["key": "SUB-" + id, "command": "ADD"]) }
    }

    private func removeSubscription(_ s: inout State, _ id: String, deviceId: String) {
        s.subscriptions.removeValue(forKey: id)
        s.subscriptionDevice.removeValue(forKey: id)
        s.deviceSubscriptions[deviceId]?.removeAll { $0 == id }
        emit(s, "SUBS-" + deviceId, ["key": "SUB-" + id, "command": "DELETE"])
    }

    private func removeDevice(_ s: inout State, _ deviceId: String) {
        for id in s.deviceSubscriptions[deviceId] ?? [] {
            s.subscriptions.removeValue(forKey: id)
            s.subscriptionDevice.removeValue(forKey: id)
            emit(s, "SUBS-" + deviceId, ["key": "SUB-" + id, "command": "DELETE"])
        }
        s.deviceSubscriptions.removeValue(forKey: deviceId)
        s.devices.removeValue(forKey: deviceId)
    }

    // MARK: Changes made through other servers

    /// Counts the module's own publications per device: a refresh read from the store before
    /// the count changed may be older than what was published meanwhile.
    var revisions: [String: UInt64] {
        state.withLockedValue { $0.revisions }
    }

    /// The devices these items know about.
    var knownDevices: Set<String> {
        state.withLockedValue { Set($0.devices.keys).union($0.deviceSubscriptions.keys) }
    }

    /// Brings one device's items to the state read from the store (`device` nil: deleted),
    /// sending only what differs. Applies nothing and returns false when the module published
    /// something for the device since `revision` was taken: the caller reads the store again.
    func reconcile(
        deviceId: String, device: MPNDeviceRecord?, subscriptions: [MPNSubscriptionRecord],
        ifRevision revision: UInt64
    ) -> Bool {
        state.withLockedValue { s in
            guard s.revisions[deviceId, default: 0] == revision else { return false }
            guard let device else {
                if s.devices[deviceId] != nil || s.deviceSubscriptions[deviceId] != nil { removeDevice(&s, deviceId) }
                s.revisions.removeValue(forKey: deviceId)
                return true
            }
            let deviceFields = Self.fields(of: device)
            if s.devices[deviceId] != deviceFields { setDevice(&s, deviceId, deviceFields) }
            let current = Set(subscriptions.map(\.id))
            for id in s.deviceSubscriptions[deviceId] ?? [] where !current.contains(id) {
                removeSubscription(&s, id, deviceId: deviceId)
            }
            for r in subscriptions {
                // Moved here from another device (a token change merged two devices).
                if let previous = s.subscriptionDevice[r.id], previous != deviceId {
                    removeSubscription(&s, r.id, deviceId: previous)
                }
                let fields = Self.fields(of: r)
                if s.subscriptions[r.id] != fields || s.subscriptionDevice[r.id] == nil {
                    setSubscription(&s, r.id, deviceId: deviceId, fields)
                }
            }
            return true
        }
    }

    /// After a token change merged device `old` into another: drops `old` and publishes the
    /// merged device's subscriptions (`records`, now under the new device id).
    func merge(from old: String, records: [MPNSubscriptionRecord]) {
        remove(deviceId: old)
        for r in records { publish(subscription: r) }
    }
}
