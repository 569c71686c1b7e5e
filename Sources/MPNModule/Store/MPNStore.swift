import Foundation
import TLCP

/// Where the MPN Module keeps devices and MPN subscriptions. Every mutating call is committed
/// (durably: SQLite `synchronous=FULL`, PostgreSQL synchronous commit) before it returns, so
/// the caller may acknowledge it to the client right after.
///
/// Implementations: `SQLiteMPNStore` (embedded default, GRDB, one file in WAL mode) and
/// `PostgresMPNStore` (postgres-nio, for clusters). Both create and migrate their schema when
/// opened. Errors are thrown as `MPNStoreError`; the engine maps them to code 41.
public protocol MPNStore: Sendable {
    // MARK: Devices

    /// Finds the device (platform, application, token) or creates it (ACTIVE, badge 0, new
    /// UUID). Updates `lastAccess`. `created` tells which happened.
    func registerDevice(
        platform: MPNPlatform, applicationId: String, token: String,
        now: MPNTimestamp
    ) async throws -> (device: MPNDeviceRecord, created: Bool)

    /// Token rotation (`PN_newDeviceToken`), atomically: the device of `oldToken` moves to
    /// `newToken` and becomes ACTIVE. If `newToken` already has a device, the subscriptions of
    /// the old one move to it and the old one is deleted. If `oldToken` is unknown this is a
    /// plain registration of `newToken` (resuming it if suspended). Returns the resulting device
    /// and the id of a device that was merged away, if any.
    func changeDeviceToken(
        platform: MPNPlatform, applicationId: String, oldToken: String, newToken: String,
        now: MPNTimestamp
    ) async throws -> (device: MPNDeviceRecord, removedDeviceId: String?)

    func device(id: String) async throws -> MPNDeviceRecord?
    func device(platform: MPNPlatform, applicationId: String, token: String) async throws -> MPNDeviceRecord?
    func allDevices() async throws -> [MPNDeviceRecord]

    /// Sets the status (the timestamp changes only when the status does). nil if unknown.
    func setDeviceStatus(id: String, status: MPNDeviceStatus, now: MPNTimestamp) async throws -> MPNDeviceRecord?
    /// Records an access (for inactivity collection). false if unknown.
    @discardableResult
    func touchDevice(id: String, now: MPNTimestamp) async throws -> Bool
    /// Increments the AUTO badge counter and returns the new value (nil if unknown).
    func nextBadge(deviceId: String) async throws -> Int?
    /// Sets the AUTO badge counter to 0. false if unknown.
    func resetBadge(deviceId: String) async throws -> Bool
    /// Deletes a device and its subscriptions. false if unknown.
    @discardableResult
    func deleteDevice(id: String) async throws -> Bool
    /// Deletes the devices not accessed since `cutoff` that are SUSPENDED or have no ACTIVE
    /// subscription (their subscriptions go with them). Returns their ids.
    func collectInactiveDevices(lastAccessBefore cutoff: MPNTimestamp) async throws -> [String]

    // MARK: Subscriptions

    /// Inserts a new subscription (its device must exist).
    func insertSubscription(_ subscription: MPNSubscriptionRecord) async throws
    /// Inserts a new subscription unless its device already has `maxPerDevice` of them (then
    /// false), atomically: concurrent inserts for one device cannot pass the limit together.
    func insertSubscription(_ subscription: MPNSubscriptionRecord, maxPerDevice: Int) async throws -> Bool
    /// Overwrites the subscription with the same id. false if unknown.
    func updateSubscription(_ subscription: MPNSubscriptionRecord) async throws -> Bool
    func subscription(id: String) async throws -> MPNSubscriptionRecord?
    /// The device's subscriptions (all, or those with `status`), oldest first.
    func subscriptions(deviceId: String, status: MPNSubscriptionStatus?) async throws -> [MPNSubscriptionRecord]
    /// Every subscription with `status` (all when nil), for start-up.
    func allSubscriptions(status: MPNSubscriptionStatus?) async throws -> [MPNSubscriptionRecord]
    /// The subscription an activation with `PN_coalescing=true` would modify: same device,
    /// adapter set, data adapter, group, schema and trigger (nil matches nil).
    func coalescingCandidate(
        deviceId: String, adapterSet: String, dataAdapter: String, group: String,
        schema: String, trigger: String?
    ) async throws -> MPNSubscriptionRecord?
    /// ACTIVE → TRIGGERED, only if it is ACTIVE now (compare-and-set: the caller that gets
    /// true sends the one notification). Sets the status timestamp and the last-trigger time.
    func markTriggered(id: String, now: MPNTimestamp) async throws -> Bool
    /// `markTriggered` for several subscriptions in one commit (group commit of a burst of
    /// triggers); returns the ids that were ACTIVE and are now TRIGGERED.
    func markTriggered(ids: [String], now: MPNTimestamp) async throws -> Set<String>
    /// The outbox commit of a burst of fired triggers, in one transaction: each subscription
    /// still ACTIVE becomes TRIGGERED (compare-and-set, as `markTriggered`), gets its AUTO badge
    /// when it uses one, and its notification is written to the outbox, claimed by `moduleId`.
    /// Returns the entries written (the winners), in the order given.
    func commitTriggers(_ fired: [MPNFiredTrigger], moduleId: String, now: MPNTimestamp) async throws -> [MPNOutboxEntry]
    /// Claims (compare-and-set on `claimed_by`) and returns the PENDING outbox entries of the
    /// devices `moduleId` runs that no live instance other than `moduleId` has claimed (an
    /// instance silent since before `silentBefore` is dead), oldest first.
    func claimOutbox(moduleId: String, silentBefore: MPNTimestamp) async throws -> [MPNOutboxEntry]
    /// The provider accepted the entry: it is deleted. false if unknown.
    @discardableResult
    func deleteOutboxEntry(id: String) async throws -> Bool
    /// The entry failed for good: FAILED with `reason`, never sent again. false if unknown.
    @discardableResult
    func failOutboxEntry(id: String, reason: String) async throws -> Bool
    /// Every outbox entry (with `status`, or all), oldest first (diagnostics, tests).
    func outboxEntries(status: MPNOutboxStatus?) async throws -> [MPNOutboxEntry]
    /// `nextBadge` for each entry (a device may repeat) in one commit, results in order.
    func nextBadges(deviceIds: [String]) async throws -> [Int?]
    /// Deletes one subscription. false if unknown.
    func deleteSubscription(id: String) async throws -> Bool
    /// Deletes the device's subscriptions (all, or those with `status`); returns their ids.
    func deleteSubscriptions(deviceId: String, status: MPNSubscriptionStatus?) async throws -> [String]

    // MARK: Cluster (several MPN Module instances on one database)

    /// Whether several servers may use this store at once (PostgreSQL); an embedded store has
    /// one instance, which owns every device.
    var isShared: Bool { get }

    /// Records that module instance `moduleId` is alive at `now`.
    func heartbeat(moduleId: String, now: MPNTimestamp) async throws
    /// Makes `moduleId` the instance that runs the device (the one whose session registered it).
    func claimDevice(id: String, moduleId: String) async throws
    /// Takes over, in one statement, the devices without a live owner (none, an instance that
    /// left, or one silent since before `silentBefore`), then returns every device `moduleId` owns.
    func claimOrphanedDevices(moduleId: String, silentBefore: MPNTimestamp) async throws -> Set<String>
    /// A clean stop: the instance's devices become orphans for the others to take over.
    func removeModule(moduleId: String) async throws

    /// Reports changes made by every instance on a shared store until cancelled (returns) or
    /// the store's connection fails (throws): see `MPNStoreChange`. Stores with one instance
    /// return at once.
    func watchChanges(_ onChange: @escaping @Sendable (MPNStoreChange) -> Void) async throws

    /// Releases connections. Further calls throw `MPNStoreError.closed`.
    func close() async
}

extension MPNStore {
    /// Count then insert: not atomic (stores override it).
    public func insertSubscription(_ s: MPNSubscriptionRecord, maxPerDevice: Int) async throws -> Bool {
        guard try await subscriptions(deviceId: s.deviceId, status: nil).count < maxPerDevice else { return false }
        try await insertSubscription(s)
        return true
    }

    public func markTriggered(ids: [String], now: MPNTimestamp) async throws -> Set<String> {
        var won = Set<String>()
        for id in ids where try await markTriggered(id: id, now: now) { won.insert(id) }
        return won
    }

    public func nextBadges(deviceIds: [String]) async throws -> [Int?] {
        var result: [Int?] = []
        for d in deviceIds { result.append(try await nextBadge(deviceId: d)) }
        return result
    }
}

/// A store failure (the engine reports it as code 41).
public struct MPNStoreError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "MPN store: \(message)" }

    /// A request made after the store's `close()`.
    public static let closed = MPNStoreError("closed")
}

/// New device and subscription ids: 36-character lowercase UUIDs.
enum MPNIdentifier {
    static func make() -> String { UUID().uuidString.lowercased() }
}

// MARK: - Column encodings shared by the stores

enum StoreCodec {
    static func joinNames(_ names: [String]) -> String { names.joined(separator: " ") }
    static func splitNames(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }

    static func platform(_ s: String) throws -> MPNPlatform {
        guard let p = MPNPlatform(rawValue: s) else { throw MPNStoreError("bad platform \(s) in database") }
        return p
    }
    static func deviceStatus(_ s: String) throws -> MPNDeviceStatus {
        guard let v = MPNDeviceStatus(rawValue: s) else { throw MPNStoreError("bad device status \(s) in database") }
        return v
    }
    static func subscriptionStatus(_ s: String) throws -> MPNSubscriptionStatus {
        guard let v = MPNSubscriptionStatus(rawValue: s) else { throw MPNStoreError("bad subscription status \(s) in database") }
        return v
    }
    static func outboxStatus(_ s: String) throws -> MPNOutboxStatus {
        guard let v = MPNOutboxStatus(rawValue: s) else { throw MPNStoreError("bad outbox status \(s) in database") }
        return v
    }
    static func mode(_ s: String) throws -> SubscriptionMode {
        guard let v = SubscriptionMode(rawValue: s) else { throw MPNStoreError("bad mode \(s) in database") }
        return v
    }
    static func bufferSize(_ s: String?) throws -> RequestedBufferSize? {
        guard let s else { return nil }
        guard let v = RequestedBufferSize(wireValue: s) else { throw MPNStoreError("bad buffer size \(s) in database") }
        return v
    }
    static func maxFrequency(_ s: String?) throws -> RequestedFrequency? {
        guard let s else { return nil }
        guard let v = RequestedFrequency(wireValue: s) else { throw MPNStoreError("bad frequency \(s) in database") }
        return v
    }
}
