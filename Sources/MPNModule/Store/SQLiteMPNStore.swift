import Foundation
import GRDB
import TLCP

/// The embedded MPN store: one SQLite file through GRDB, in WAL mode, with
/// `synchronous=FULL` so that a returned write survives a crash of the process (and of the
/// machine). The file and its schema are created on first open; schema changes are GRDB
/// `DatabaseMigrator` migrations (`MPNSchema.migrations`).
public final class SQLiteMPNStore: MPNStore {
    private let database: StoreConnection<DatabasePool>
    public let path: String

    /// The database, until `close()` (`StoreConnection`).
    private var pool: DatabasePool { get throws { try database.open } }

    /// Opens (creating if needed) the database at `path`, then migrates it.
    public init(path: String) throws {
        self.path = path
        var config = Configuration()
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let pool = try DatabasePool(path: path, configuration: config)
        database = StoreConnection(pool)
        var migrator = DatabaseMigrator()
        for migration in MPNSchema.migrations {
            migrator.registerMigration(migration.name) { db in
                for sql in migration.statements { try db.execute(sql: sql) }
            }
        }
        try migrator.migrate(pool)
    }

    /// Names of the migrations applied to the file (for tests and diagnostics).
    public func appliedMigrations() async throws -> [String] {
        try await pool.read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
        }
    }

    public func close() async {
        try? database.refuseRequests().close()
    }

    // MARK: Devices

    public func registerDevice(
        platform: MPNPlatform, applicationId: String, token: String,
        now: MPNTimestamp
    ) async throws -> (device: MPNDeviceRecord, created: Bool) {
        try await pool.write { db in
            if let existing = try Self.fetchDevice(db, platform: platform, app: applicationId, token: token) {
                try db.execute(sql: "UPDATE mpn_devices SET last_access = ? WHERE device_id = ?", arguments: [now, existing.id])
                var d = existing
                d.lastAccess = now
                return (d, false)
            }
            let d = MPNDeviceRecord(
                id: MPNIdentifier.make(), platform: platform, applicationId: applicationId,
                deviceToken: token, statusTimestamp: now, lastAccess: now, createdAt: now)
            try Self.insert(db, d)
            return (d, true)
        }
    }

    public func changeDeviceToken(
        platform: MPNPlatform, applicationId: String, oldToken: String, newToken: String,
        now: MPNTimestamp
    ) async throws -> (device: MPNDeviceRecord, removedDeviceId: String?) {
        try await pool.write { db in
            let old = try Self.fetchDevice(db, platform: platform, app: applicationId, token: oldToken)
            let new = try Self.fetchDevice(db, platform: platform, app: applicationId, token: newToken)
            var removed: String?
            var result: MPNDeviceRecord
            switch (old, new) {
            case (let o?, nil):
                try db.execute(
                    sql: "UPDATE mpn_devices SET device_token = ?, last_access = ? WHERE device_id = ?",
                    arguments: [newToken, now, o.id])
                result = o
                result.deviceToken = newToken
            case (let o?, let n?) where o.id != n.id:
                try db.execute(sql: "UPDATE mpn_subscriptions SET device_id = ? WHERE device_id = ?", arguments: [n.id, o.id])
                try db.execute(sql: "UPDATE mpn_outbox SET device_id = ? WHERE device_id = ?", arguments: [n.id, o.id])
                try db.execute(sql: "DELETE FROM mpn_devices WHERE device_id = ?", arguments: [o.id])
                removed = o.id
                result = n
            case (_, let n?):
                result = n
            case (nil, nil):
                result = MPNDeviceRecord(
                    id: MPNIdentifier.make(), platform: platform, applicationId: applicationId,
                    deviceToken: newToken, statusTimestamp: now, lastAccess: now, createdAt: now)
                try Self.insert(db, result)
            }
            result.lastAccess = now
            if result.status != .active {
                result.status = .active
                result.statusTimestamp = now
            }
            try db.execute(
                sql: "UPDATE mpn_devices SET status = ?, status_timestamp = ?, last_access = ? WHERE device_id = ?",
                arguments: [result.status.rawValue, result.statusTimestamp, now, result.id])
            return (result, removed)
        }
    }

    public func device(id: String) async throws -> MPNDeviceRecord? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(MPNSchema.deviceColumns) FROM mpn_devices WHERE device_id = ?",
                arguments: [id]
            ).map(Self.decodeDevice)
        }
    }

    public func device(platform: MPNPlatform, applicationId: String, token: String) async throws -> MPNDeviceRecord? {
        try await pool.read { db in try Self.fetchDevice(db, platform: platform, app: applicationId, token: token) }
    }

    public func allDevices() async throws -> [MPNDeviceRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(MPNSchema.deviceColumns) FROM mpn_devices ORDER BY created_at, device_id")
                .map(Self.decodeDevice)
        }
    }

    public func setDeviceStatus(id: String, status: MPNDeviceStatus, now: MPNTimestamp) async throws -> MPNDeviceRecord? {
        try await pool.write { db in
            guard
                var d = try Row.fetchOne(
                    db, sql: "SELECT \(MPNSchema.deviceColumns) FROM mpn_devices WHERE device_id = ?",
                    arguments: [id]
                ).map(Self.decodeDevice)
            else { return nil }
            guard d.status != status else { return d }
            d.status = status
            d.statusTimestamp = now
            try db.execute(
                sql: "UPDATE mpn_devices SET status = ?, status_timestamp = ? WHERE device_id = ?",
                arguments: [status.rawValue, now, id])
            return d
        }
    }

    public func touchDevice(id: String, now: MPNTimestamp) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE mpn_devices SET last_access = ? WHERE device_id = ?", arguments: [now, id])
            return db.changesCount > 0
        }
    }

    public func nextBadge(deviceId: String) async throws -> Int? {
        try await pool.write { db in
            try db.execute(sql: "UPDATE mpn_devices SET badge = badge + 1 WHERE device_id = ?", arguments: [deviceId])
            guard db.changesCount > 0 else { return nil }
            return try Int.fetchOne(db, sql: "SELECT badge FROM mpn_devices WHERE device_id = ?", arguments: [deviceId])
        }
    }

    public func resetBadge(deviceId: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE mpn_devices SET badge = 0 WHERE device_id = ?", arguments: [deviceId])
            return db.changesCount > 0
        }
    }

    public func deleteDevice(id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM mpn_outbox WHERE device_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM mpn_subscriptions WHERE device_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM mpn_devices WHERE device_id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func collectInactiveDevices(lastAccessBefore cutoff: MPNTimestamp) async throws -> [String] {
        try await pool.write { db in
            let ids = try String.fetchAll(
                db,
                sql: """
                    SELECT device_id FROM mpn_devices d WHERE d.last_access < ? AND (d.status = 'SUSPENDED' OR NOT EXISTS
                        (SELECT 1 FROM mpn_subscriptions s WHERE s.device_id = d.device_id AND s.status = 'ACTIVE'))
                    """, arguments: [cutoff])
            for id in ids {
                try db.execute(sql: "DELETE FROM mpn_outbox WHERE device_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM mpn_subscriptions WHERE device_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM mpn_devices WHERE device_id = ?", arguments: [id])
            }
            return ids
        }
    }

    // MARK: Subscriptions

    public func insertSubscription(_ s: MPNSubscriptionRecord) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO mpn_subscriptions (\(MPNSchema.subscriptionColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                arguments: Self.arguments(s))
        }
    }

    public func insertSubscription(_ s: MPNSubscriptionRecord, maxPerDevice: Int) async throws -> Bool {
        try await pool.write { db in
            // One writer at a time: the count and the insert see the same state.
            let count =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM mpn_subscriptions WHERE device_id = ?",
                    arguments: [s.deviceId]) ?? 0
            guard count < maxPerDevice else { return false }
            try db.execute(
                sql: "INSERT INTO mpn_subscriptions (\(MPNSchema.subscriptionColumns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                arguments: Self.arguments(s))
            return true
        }
    }

    public func updateSubscription(_ s: MPNSubscriptionRecord) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE mpn_subscriptions SET device_id = ?, adapter_set = ?, data_adapter = ?, item_group = ?, \
                    field_schema = ?, items = ?, fields = ?, mode = ?, notification_format = ?, trigger_expression = ?, \
                    buffer_size = ?, max_frequency = ?, status = ?, status_timestamp = ?, created_at = ?, \
                    last_trigger_time = ? WHERE subscription_id = ?
                    """, arguments: Self.arguments(s, idLast: true))
            return db.changesCount > 0
        }
    }

    public func subscription(id: String) async throws -> MPNSubscriptionRecord? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(MPNSchema.subscriptionColumns) FROM mpn_subscriptions WHERE subscription_id = ?",
                arguments: [id]
            ).map(Self.decodeSubscription)
        }
    }

    public func subscriptions(deviceId: String, status: MPNSubscriptionStatus?) async throws -> [MPNSubscriptionRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MPNSchema.subscriptionColumns) FROM mpn_subscriptions WHERE device_id = ? AND (? IS NULL OR status = ?)
                    ORDER BY created_at, subscription_id
                    """, arguments: [deviceId, status?.rawValue, status?.rawValue]
            ).map(Self.decodeSubscription)
        }
    }

    public func allSubscriptions(status: MPNSubscriptionStatus?) async throws -> [MPNSubscriptionRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MPNSchema.subscriptionColumns) FROM mpn_subscriptions WHERE (? IS NULL OR status = ?)
                    ORDER BY created_at, subscription_id
                    """, arguments: [status?.rawValue, status?.rawValue]
            ).map(Self.decodeSubscription)
        }
    }

    public func coalescingCandidate(
        deviceId: String, adapterSet: String, dataAdapter: String, group: String,
        schema: String, trigger: String?
    ) async throws -> MPNSubscriptionRecord? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(MPNSchema.subscriptionColumns) FROM mpn_subscriptions WHERE device_id = ? AND adapter_set = ? \
                    AND data_adapter = ? AND item_group = ? AND field_schema = ? AND trigger_expression IS ? \
                    ORDER BY created_at, subscription_id LIMIT 1
                    """, arguments: [deviceId, adapterSet, dataAdapter, group, schema, trigger]
            ).map(Self.decodeSubscription)
        }
    }

    public func markTriggered(id: String, now: MPNTimestamp) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE mpn_subscriptions SET status = 'TRIGGERED', status_timestamp = ?, last_trigger_time = ? \
                    WHERE subscription_id = ? AND status = 'ACTIVE'
                    """, arguments: [now, now, id])
            return db.changesCount > 0
        }
    }

    public func markTriggered(ids: [String], now: MPNTimestamp) async throws -> Set<String> {
        try await pool.write { db in
            var won = Set<String>()
            for id in ids {
                try db.execute(
                    sql: """
                        UPDATE mpn_subscriptions SET status = 'TRIGGERED', status_timestamp = ?, last_trigger_time = ? \
                        WHERE subscription_id = ? AND status = 'ACTIVE'
                        """, arguments: [now, now, id])
                if db.changesCount > 0 { won.insert(id) }
            }
            return won
        }
    }

    public func nextBadges(deviceIds: [String]) async throws -> [Int?] {
        try await pool.write { db in
            var result: [Int?] = []
            for d in deviceIds {
                try db.execute(sql: "UPDATE mpn_devices SET badge = badge + 1 WHERE device_id = ?", arguments: [d])
                result.append(
                    db.changesCount > 0
                        ? try Int.fetchOne(db, sql: "SELECT badge FROM mpn_devices WHERE device_id = ?", arguments: [d]) : nil)
            }
            return result
        }
    }

    public func commitTriggers(_ fired: [MPNFiredTrigger], moduleId: String, now: MPNTimestamp) async throws -> [MPNOutboxEntry] {
        guard !fired.isEmpty else { return [] }
        return try await pool.write { db in
            var written: [MPNOutboxEntry] = []
            for f in fired {
                try db.execute(
                    sql: """
                        UPDATE mpn_subscriptions SET status = 'TRIGGERED', status_timestamp = ?, last_trigger_time = ? \
                        WHERE subscription_id = ? AND status = 'ACTIVE'
                        """, arguments: [now, now, f.subscriptionId])
                guard db.changesCount > 0 else { continue }
                var badge: Int?
                if f.usesAutoBadge {
                    try db.execute(sql: "UPDATE mpn_devices SET badge = badge + 1 WHERE device_id = ?", arguments: [f.deviceId])
                    badge = try Int.fetchOne(db, sql: "SELECT badge FROM mpn_devices WHERE device_id = ?", arguments: [f.deviceId])
                }
                let e = f.entry(badge: badge, now: now)
                try db.execute(
                    sql: """
                        INSERT INTO mpn_outbox (\(MPNSchema.outboxColumns), claimed_by) VALUES (?,?,?,?,?,?,?,?)
                        """,
                    arguments: [
                        e.id, e.subscriptionId, e.deviceId, e.payload, e.createdAt, e.status.rawValue, e.failure,
                        moduleId,
                    ])
                written.append(e)
            }
            return written
        }
    }

    public func claimOutbox(moduleId: String, silentBefore: MPNTimestamp) async throws -> [MPNOutboxEntry] {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE mpn_outbox SET claimed_by = ? WHERE status = 'PENDING' \
                    AND device_id IN (SELECT device_id FROM mpn_devices WHERE module_id = ? OR module_id IS NULL) \
                    AND (claimed_by IS NULL OR claimed_by = ? OR claimed_by NOT IN \
                        (SELECT module_id FROM mpn_modules WHERE last_activity >= ?))
                    """, arguments: [moduleId, moduleId, moduleId, silentBefore])
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MPNSchema.outboxColumns) FROM mpn_outbox WHERE status = 'PENDING' AND claimed_by = ? \
                    ORDER BY created_at, entry_id
                    """, arguments: [moduleId]
            ).map(Self.decodeOutbox)
        }
    }

    public func deleteOutboxEntry(id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM mpn_outbox WHERE entry_id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func failOutboxEntry(id: String, reason: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE mpn_outbox SET status = 'FAILED', failure = ? WHERE entry_id = ?", arguments: [reason, id])
            return db.changesCount > 0
        }
    }

    public func outboxEntries(status: MPNOutboxStatus?) async throws -> [MPNOutboxEntry] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MPNSchema.outboxColumns) FROM mpn_outbox WHERE (? IS NULL OR status = ?) ORDER BY created_at, entry_id
                    """, arguments: [status?.rawValue, status?.rawValue]
            ).map(Self.decodeOutbox)
        }
    }

    public var isShared: Bool { false }

    public func heartbeat(moduleId: String, now: MPNTimestamp) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO mpn_modules (module_id, last_activity) VALUES (?, ?) \
                    ON CONFLICT (module_id) DO UPDATE SET last_activity = excluded.last_activity
                    """, arguments: [moduleId, now])
        }
    }

    public func claimDevice(id: String, moduleId: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE mpn_devices SET module_id = ? WHERE device_id = ?", arguments: [moduleId, id])
        }
    }

    public func claimOrphanedDevices(moduleId: String, silentBefore: MPNTimestamp) async throws -> Set<String> {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE mpn_devices SET module_id = ? WHERE module_id IS NULL OR module_id NOT IN \
                    (SELECT module_id FROM mpn_modules WHERE last_activity >= ?)
                    """, arguments: [moduleId, silentBefore])
            return Set(try String.fetchAll(db, sql: "SELECT device_id FROM mpn_devices WHERE module_id = ?", arguments: [moduleId]))
        }
    }

    public func removeModule(moduleId: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM mpn_modules WHERE module_id = ?", arguments: [moduleId])
        }
    }

    public func deleteSubscription(id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM mpn_subscriptions WHERE subscription_id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func deleteSubscriptions(deviceId: String, status: MPNSubscriptionStatus?) async throws -> [String] {
        try await pool.write { db in
            let ids = try String.fetchAll(
                db,
                sql: """
                    SELECT subscription_id FROM mpn_subscriptions WHERE device_id = ? AND (? IS NULL OR status = ?)
                    ORDER BY created_at, subscription_id
                    """, arguments: [deviceId, status?.rawValue, status?.rawValue])
            try db.execute(
                sql: "DELETE FROM mpn_subscriptions WHERE device_id = ? AND (? IS NULL OR status = ?)",
                arguments: [deviceId, status?.rawValue, status?.rawValue])
            return ids
        }
    }

    // MARK: Row mapping

    private static func fetchDevice(_ db: Database, platform: MPNPlatform, app: String, token: String) throws -> MPNDeviceRecord? {
        try Row.fetchOne(
            db,
            sql: """
                SELECT \(MPNSchema.deviceColumns) FROM mpn_devices WHERE platform = ? AND application_id = ? AND device_token = ?
                """, arguments: [platform.rawValue, app, token]
        ).map(decodeDevice)
    }

    private static func insert(_ db: Database, _ d: MPNDeviceRecord) throws {
        try db.execute(
            sql: "INSERT INTO mpn_devices (\(MPNSchema.deviceColumns)) VALUES (?,?,?,?,?,?,?,?,?)",
            arguments: [
                d.id, d.platform.rawValue, d.applicationId, d.deviceToken, d.status.rawValue,
                d.statusTimestamp, d.lastAccess, d.badge, d.createdAt,
            ])
    }

    private static func decodeDevice(_ row: Row) throws -> MPNDeviceRecord {
        MPNDeviceRecord(
            id: try row.decode(String.self, forColumn: "device_id"),
            platform: try StoreCodec.platform(row.decode(String.self, forColumn: "platform")),
            applicationId: try row.decode(String.self, forColumn: "application_id"),
            deviceToken: try row.decode(String.self, forColumn: "device_token"),
            status: try StoreCodec.deviceStatus(row.decode(String.self, forColumn: "status")),
            statusTimestamp: try row.decode(Int64.self, forColumn: "status_timestamp"),
            lastAccess: try row.decode(Int64.self, forColumn: "last_access"),
            badge: try row.decode(Int.self, forColumn: "badge"),
            createdAt: try row.decode(Int64.self, forColumn: "created_at"))
    }

    private static func decodeOutbox(_ row: Row) throws -> MPNOutboxEntry {
        MPNOutboxEntry(
            id: try row.decode(String.self, forColumn: "entry_id"),
            subscriptionId: try row.decode(String.self, forColumn: "subscription_id"),
            deviceId: try row.decode(String.self, forColumn: "device_id"),
            payload: try row.decode(String.self, forColumn: "payload"),
            createdAt: try row.decode(Int64.self, forColumn: "created_at"),
            status: try StoreCodec.outboxStatus(row.decode(String.self, forColumn: "status")),
            failure: try row.decode(String?.self, forColumn: "failure"))
    }

    private static func arguments(_ s: MPNSubscriptionRecord, idLast: Bool = false) -> StatementArguments {
        var values: [(any DatabaseValueConvertible)?] = [
            s.deviceId, s.adapterSet, s.dataAdapter, s.group, s.schema, StoreCodec.joinNames(s.items),
            StoreCodec.joinNames(s.fields), s.mode.rawValue, s.notificationFormat, s.trigger, s.bufferSize?.wireValue,
            s.maxFrequency?.wireValue, s.status.rawValue, s.statusTimestamp, s.createdAt, s.lastTriggerTime,
        ]
        if idLast { values.append(s.id) } else { values.insert(s.id, at: 0) }
        return StatementArguments(values)
    }

    private static func decodeSubscription(_ row: Row) throws -> MPNSubscriptionRecord {
        MPNSubscriptionRecord(
            id: try row.decode(String.self, forColumn: "subscription_id"),
            deviceId: try row.decode(String.self, forColumn: "device_id"),
            adapterSet: try row.decode(String.self, forColumn: "adapter_set"),
            dataAdapter: try row.decode(String.self, forColumn: "data_adapter"),
            group: try row.decode(String.self, forColumn: "item_group"),
            items: StoreCodec.splitNames(try row.decode(String.self, forColumn: "items")),
            schema: try row.decode(String.self, forColumn: "field_schema"),
            fields: StoreCodec.splitNames(try row.decode(String.self, forColumn: "fields")),
            mode: try StoreCodec.mode(row.decode(String.self, forColumn: "mode")),
            notificationFormat: try row.decode(String.self, forColumn: "notification_format"),
            trigger: try row.decode(String?.self, forColumn: "trigger_expression"),
            bufferSize: try StoreCodec.bufferSize(row.decode(String?.self, forColumn: "buffer_size")),
            maxFrequency: try StoreCodec.maxFrequency(row.decode(String?.self, forColumn: "max_frequency")),
            status: try StoreCodec.subscriptionStatus(row.decode(String.self, forColumn: "status")),
            statusTimestamp: try row.decode(Int64.self, forColumn: "status_timestamp"),
            createdAt: try row.decode(Int64.self, forColumn: "created_at"),
            lastTriggerTime: try row.decode(Int64?.self, forColumn: "last_trigger_time"))
    }
}
