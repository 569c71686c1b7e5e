import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import TLCP

/// The clustered MPN store: PostgreSQL through postgres-nio's pooled `PostgresClient`.
/// Commits are synchronous (the server default `synchronous_commit=on`; never turned off
/// here). The schema is migrated on `open` under an advisory lock, so several servers may start
/// against one database at once; applied migrations are listed in `mpn_schema_migrations`.
public final class PostgresMPNStore: MPNStore {
    private let connection: StoreConnection<PostgresClient>
    /// The connection pool, until `close()` (`StoreConnection`).
    var client: PostgresClient { get throws { try connection.open } }
    /// The server process of the connection `watchChanges` listens on (diagnostics, tests).
    let listeningBackend = NIOLockedValueBox<Int32?>(nil)
    private let runTask: Task<Void, Never>
    let logger: Logger

    /// Connects with a URL `postgres://user[:password]@host[:port]/database[?sslmode=…]` (TLS as
    /// `PostgresURL` describes) and migrates the schema. A first connection is made on its own
    /// so that a TLS or authentication failure is reported at once, with what was asked.
    /// - Parameter schema: a PostgreSQL schema (namespace) for the tables, created if missing
    ///   (letters, digits and `_`); nil uses the connection's default search path.
    /// - Parameter eventLoopGroup: where the connections run.
    public static func open(
        url: String, schema: String? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "lightstreamer.mpn.postgres")
    ) async throws -> PostgresMPNStore {
        let parsed = try PostgresURL.parse(url)
        var config = try parsed.clientConfiguration()
        try await parsed.checkConnection(on: eventLoopGroup, logger: logger)
        if let schema {
            guard let first = schema.unicodeScalars.first, !("0"..."9").contains(first), schema.count <= 63,
                schema.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" })
            else {
                throw MPNStoreError("bad schema name \(schema)")
            }
            config.options.additionalStartupParameters = [("search_path", schema)]
        }
        let store = PostgresMPNStore(configuration: config, schema: schema, eventLoopGroup: eventLoopGroup, logger: logger)
        // Let the pool's run() task start before the first lease (avoids a spurious warning).
        for _ in 0..<4 { await Task.yield() }
        do {
            try await store.migrate()
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    private let schema: String?

    private init(configuration: PostgresClient.Configuration, schema: String?, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        let client = PostgresClient(configuration: configuration, eventLoopGroup: eventLoopGroup, backgroundLogger: logger)
        self.connection = StoreConnection(client)
        self.schema = schema
        self.logger = logger
        self.runTask = Task { await client.run() }
    }

    public func close() async {
        _ = connection.refuseRequests()
        runTask.cancel()
        _ = await runTask.value
    }

    /// Names of the applied migrations, in order.
    public func appliedMigrations() async throws -> [String] {
        let rows = try await client.query("SELECT name FROM mpn_schema_migrations ORDER BY applied_order", logger: logger)
        var names: [String] = []
        for try await name in rows.decode(String.self) { names.append(name) }
        return names
    }

    private func migrate() async throws {
        try await client.withTransaction(logger: logger) { conn in
            try await conn.query("SELECT pg_advisory_xact_lock(7305142)", logger: self.logger)
            if let schema = self.schema {
                try await conn.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: self.logger)
            }
            try await conn.query(
                """
                CREATE TABLE IF NOT EXISTS mpn_schema_migrations (
                    name VARCHAR(128) PRIMARY KEY, applied_order INTEGER NOT NULL, applied_at BIGINT NOT NULL)
                """, logger: self.logger)
            var applied = Set<String>()
            for try await name in try await conn.query("SELECT name FROM mpn_schema_migrations", logger: self.logger)
                .decode(String.self)
            { applied.insert(name) }
            for (order, migration) in (MPNSchema.migrations + MPNSchema.postgresMigrations).enumerated()
            where !applied.contains(migration.name) {
                for sql in migration.statements {
                    try await conn.query(PostgresQuery(unsafeSQL: sql), logger: self.logger)
                }
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                try await conn.query(
                    """
                    INSERT INTO mpn_schema_migrations (name, applied_order, applied_at) VALUES (\(migration.name), \(order), \(now))
                    """, logger: self.logger)
            }
        }
    }

    /// Drops this store's schema and everything in it (tests).
    func dropSchema() async throws {
        guard let schema else { return }
        try await client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"), logger: logger)
    }

    // MARK: Devices

    public func registerDevice(
        platform: MPNPlatform, applicationId: String, token: String,
        now: MPNTimestamp
    ) async throws -> (device: MPNDeviceRecord, created: Bool) {
        let candidate = MPNDeviceRecord(
            id: MPNIdentifier.make(), platform: platform, applicationId: applicationId,
            deviceToken: token, statusTimestamp: now, lastAccess: now, createdAt: now)
        let inserted = try await devices(
            """
            INSERT INTO mpn_devices (\(unescaped: MPNSchema.deviceColumns)) VALUES (\(candidate.id), \(platform.rawValue), \
            \(applicationId), \(token), \(candidate.status.rawValue), \(now), \(now), 0, \(now))
            ON CONFLICT (platform, application_id, device_token) DO NOTHING RETURNING \(unescaped: MPNSchema.deviceColumns)
            """)
        if let d = inserted.first { return (d, true) }
        let existing = try await devices(
            """
            UPDATE mpn_devices SET last_access = \(now) WHERE platform = \(platform.rawValue) AND \
            application_id = \(applicationId) AND device_token = \(token) RETURNING \(unescaped: MPNSchema.deviceColumns)
            """)
        guard let d = existing.first else { throw MPNStoreError("device vanished during registration") }
        return (d, false)
    }

    public func changeDeviceToken(
        platform: MPNPlatform, applicationId: String, oldToken: String, newToken: String,
        now: MPNTimestamp
    ) async throws -> (device: MPNDeviceRecord, removedDeviceId: String?) {
        try await client.withTransaction(logger: logger) { conn in
            func find(_ token: String) async throws -> MPNDeviceRecord? {
                try await Self.decodeDevices(
                    conn.query(
                        """
                        SELECT \(unescaped: MPNSchema.deviceColumns) FROM mpn_devices WHERE platform = \(platform.rawValue) \
                        AND application_id = \(applicationId) AND device_token = \(token) FOR UPDATE
                        """, logger: self.logger)
                ).first
            }
            let old = try await find(oldToken)
            let new = try await find(newToken)
            var removed: String?
            var result: MPNDeviceRecord
            switch (old, new) {
            case (let o?, nil):
                try await conn.query("UPDATE mpn_devices SET device_token = \(newToken) WHERE device_id = \(o.id)", logger: self.logger)
                result = o
                result.deviceToken = newToken
            case (let o?, let n?) where o.id != n.id:
                try await conn.query("UPDATE mpn_subscriptions SET device_id = \(n.id) WHERE device_id = \(o.id)", logger: self.logger)
                try await conn.query("UPDATE mpn_outbox SET device_id = \(n.id) WHERE device_id = \(o.id)", logger: self.logger)
                try await conn.query("DELETE FROM mpn_devices WHERE device_id = \(o.id)", logger: self.logger)
                removed = o.id
                result = n
            case (_, let n?):
                result = n
            case (nil, nil):
                result = MPNDeviceRecord(
                    id: MPNIdentifier.make(), platform: platform, applicationId: applicationId,
                    deviceToken: newToken, statusTimestamp: now, lastAccess: now, createdAt: now)
                try await conn.query(
                    """
                    INSERT INTO mpn_devices (\(unescaped: MPNSchema.deviceColumns)) VALUES (\(result.id), \(platform.rawValue), \
                    \(applicationId), \(newToken), \(result.status.rawValue), \(now), \(now), 0, \(now))
                    """, logger: self.logger)
            }
            result.lastAccess = now
            if result.status != .active {
                result.status = .active
                result.statusTimestamp = now
            }
            try await conn.query(
                """
                UPDATE mpn_devices SET status = \(result.status.rawValue), status_timestamp = \(result.statusTimestamp), \
                last_access = \(now) WHERE device_id = \(result.id)
                """, logger: self.logger)
            return (result, removed)
        }
    }

    public func device(id: String) async throws -> MPNDeviceRecord? {
        try await devices("SELECT \(unescaped: MPNSchema.deviceColumns) FROM mpn_devices WHERE device_id = \(id)").first
    }

    public func device(platform: MPNPlatform, applicationId: String, token: String) async throws -> MPNDeviceRecord? {
        try await devices(
            """
            SELECT \(unescaped: MPNSchema.deviceColumns) FROM mpn_devices WHERE platform = \(platform.rawValue) \
            AND application_id = \(applicationId) AND device_token = \(token)
            """
        ).first
    }

    public func allDevices() async throws -> [MPNDeviceRecord] {
        try await devices("SELECT \(unescaped: MPNSchema.deviceColumns) FROM mpn_devices ORDER BY created_at, device_id")
    }

    public func setDeviceStatus(id: String, status: MPNDeviceStatus, now: MPNTimestamp) async throws -> MPNDeviceRecord? {
        _ = try await devices(
            """
            UPDATE mpn_devices SET status = \(status.rawValue), status_timestamp = \(now) \
            WHERE device_id = \(id) AND status <> \(status.rawValue) RETURNING \(unescaped: MPNSchema.deviceColumns)
            """)
        return try await device(id: id)
    }

    public func touchDevice(id: String, now: MPNTimestamp) async throws -> Bool {
        try await !devices(
            """
            UPDATE mpn_devices SET last_access = \(now) WHERE device_id = \(id) RETURNING \(unescaped: MPNSchema.deviceColumns)
            """
        ).isEmpty
    }

    public func nextBadge(deviceId: String) async throws -> Int? {
        try await devices(
            """
            UPDATE mpn_devices SET badge = badge + 1 WHERE device_id = \(deviceId) RETURNING \(unescaped: MPNSchema.deviceColumns)
            """
        ).first?.badge
    }

    public func resetBadge(deviceId: String) async throws -> Bool {
        try await !devices(
            """
            UPDATE mpn_devices SET badge = 0 WHERE device_id = \(deviceId) RETURNING \(unescaped: MPNSchema.deviceColumns)
            """
        ).isEmpty
    }

    public func deleteDevice(id: String) async throws -> Bool {
        try await !strings("DELETE FROM mpn_devices WHERE device_id = \(id) RETURNING device_id").isEmpty
    }

    public func collectInactiveDevices(lastAccessBefore cutoff: MPNTimestamp) async throws -> [String] {
        try await strings(
            """
            DELETE FROM mpn_devices d WHERE d.last_access < \(cutoff) AND (d.status = 'SUSPENDED' OR NOT EXISTS
                (SELECT 1 FROM mpn_subscriptions s WHERE s.device_id = d.device_id AND s.status = 'ACTIVE'))
            RETURNING d.device_id
            """)
    }

    // MARK: Subscriptions

    public func insertSubscription(_ s: MPNSubscriptionRecord) async throws {
        try await client.query(
            """
            INSERT INTO mpn_subscriptions (\(unescaped: MPNSchema.subscriptionColumns)) VALUES (\(s.id), \(s.deviceId), \
            \(s.adapterSet), \(s.dataAdapter), \(s.group), \(s.schema), \(StoreCodec.joinNames(s.items)), \
            \(StoreCodec.joinNames(s.fields)), \(s.mode.rawValue), \(s.notificationFormat), \(s.trigger), \
            \(s.bufferSize?.wireValue), \(s.maxFrequency?.wireValue), \(s.status.rawValue), \(s.statusTimestamp), \
            \(s.createdAt), \(s.lastTriggerTime))
            """, logger: logger)
    }

    public func insertSubscription(_ s: MPNSubscriptionRecord, maxPerDevice: Int) async throws -> Bool {
        try await client.withTransaction(logger: logger) { conn in
            // The device row locked: concurrent inserts for one device count one after the other.
            var exists = false
            for try await _ in try await conn.query(
                """
                SELECT device_id FROM mpn_devices WHERE device_id = \(s.deviceId) FOR UPDATE
                """, logger: self.logger
            ).decode(String.self) { exists = true }
            guard exists else { throw MPNStoreError("device \(s.deviceId) not found") }
            var count: Int64 = 0
            for try await n in try await conn.query(
                """
                SELECT COUNT(*) FROM mpn_subscriptions WHERE device_id = \(s.deviceId)
                """, logger: self.logger
            ).decode(Int64.self) { count = n }
            guard count < Int64(maxPerDevice) else { return false }
            try await conn.query(
                """
                INSERT INTO mpn_subscriptions (\(unescaped: MPNSchema.subscriptionColumns)) VALUES (\(s.id), \(s.deviceId), \
                \(s.adapterSet), \(s.dataAdapter), \(s.group), \(s.schema), \(StoreCodec.joinNames(s.items)), \
                \(StoreCodec.joinNames(s.fields)), \(s.mode.rawValue), \(s.notificationFormat), \(s.trigger), \
                \(s.bufferSize?.wireValue), \(s.maxFrequency?.wireValue), \(s.status.rawValue), \(s.statusTimestamp), \
                \(s.createdAt), \(s.lastTriggerTime))
                """, logger: self.logger)
            return true
        }
    }

    public func updateSubscription(_ s: MPNSubscriptionRecord) async throws -> Bool {
        try await !strings(
            """
            UPDATE mpn_subscriptions SET device_id = \(s.deviceId), adapter_set = \(s.adapterSet), \
            data_adapter = \(s.dataAdapter), item_group = \(s.group), field_schema = \(s.schema), \
            items = \(StoreCodec.joinNames(s.items)), fields = \(StoreCodec.joinNames(s.fields)), mode = \(s.mode.rawValue), \
            notification_format = \(s.notificationFormat), trigger_expression = \(s.trigger), \
            buffer_size = \(s.bufferSize?.wireValue), max_frequency = \(s.maxFrequency?.wireValue), \
            status = \(s.status.rawValue), status_timestamp = \(s.statusTimestamp), created_at = \(s.createdAt), \
            last_trigger_time = \(s.lastTriggerTime) WHERE subscription_id = \(s.id) RETURNING subscription_id
            """
        ).isEmpty
    }

    public func subscription(id: String) async throws -> MPNSubscriptionRecord? {
        try await subscriptionRows(
            """
            SELECT \(unescaped: MPNSchema.subscriptionColumns) FROM mpn_subscriptions WHERE subscription_id = \(id)
            """
        ).first
    }

    public func subscriptions(deviceId: String, status: MPNSubscriptionStatus?) async throws -> [MPNSubscriptionRecord] {
        if let status {
            return try await subscriptionRows(
                """
                SELECT \(unescaped: MPNSchema.subscriptionColumns) FROM mpn_subscriptions WHERE device_id = \(deviceId) \
                AND status = \(status.rawValue) ORDER BY created_at, subscription_id
                """)
        }
        return try await subscriptionRows(
            """
            SELECT \(unescaped: MPNSchema.subscriptionColumns) FROM mpn_subscriptions WHERE device_id = \(deviceId) \
            ORDER BY created_at, subscription_id
            """)
    }

    public func allSubscriptions(status: MPNSubscriptionStatus?) async throws -> [MPNSubscriptionRecord] {
        if let status {
            return try await subscriptionRows(
                """
                SELECT \(unescaped: MPNSchema.subscriptionColumns) FROM mpn_subscriptions WHERE status = \(status.rawValue) \
                ORDER BY created_at, subscription_id
                """)
        }
        return try await subscriptionRows(
            """
            SELECT \(unescaped: MPNSchema.subscriptionColumns) FROM mpn_subscriptions ORDER BY created_at, subscription_id
            """)
    }

    public func coalescingCandidate(
        deviceId: String, adapterSet: String, dataAdapter: String, group: String,
        schema: String, trigger: String?
    ) async throws -> MPNSubscriptionRecord? {
        try await subscriptionRows(
            """
            SELECT \(unescaped: MPNSchema.subscriptionColumns) FROM mpn_subscriptions WHERE device_id = \(deviceId) \
            AND adapter_set = \(adapterSet) AND data_adapter = \(dataAdapter) AND item_group = \(group) \
            AND field_schema = \(schema) AND trigger_expression IS NOT DISTINCT FROM \(trigger)::VARCHAR \
            ORDER BY created_at, subscription_id LIMIT 1
            """
        ).first
    }

    public func markTriggered(id: String, now: MPNTimestamp) async throws -> Bool {
        try await !strings(
            """
            UPDATE mpn_subscriptions SET status = 'TRIGGERED', status_timestamp = \(now), last_trigger_time = \(now) \
            WHERE subscription_id = \(id) AND status = 'ACTIVE' RETURNING subscription_id
            """
        ).isEmpty
    }

    public func markTriggered(ids: [String], now: MPNTimestamp) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return Set(
            try await strings(
                """
                UPDATE mpn_subscriptions SET status = 'TRIGGERED', status_timestamp = \(now), last_trigger_time = \(now) \
                WHERE subscription_id = ANY(\(ids)) AND status = 'ACTIVE' RETURNING subscription_id
                """))
    }

    public func commitTriggers(_ fired: [MPNFiredTrigger], moduleId: String, now: MPNTimestamp) async throws -> [MPNOutboxEntry] {
        guard !fired.isEmpty else { return [] }
        return try await client.withTransaction(logger: logger) { conn in
            var written: [MPNOutboxEntry] = []
            for f in fired {
                var won = false
                for try await _ in try await conn.query(
                    """
                    UPDATE mpn_subscriptions SET status = 'TRIGGERED', status_timestamp = \(now), last_trigger_time = \(now) \
                    WHERE subscription_id = \(f.subscriptionId) AND status = 'ACTIVE' RETURNING subscription_id
                    """, logger: self.logger
                ).decode(String.self) { won = true }
                guard won else { continue }
                var badge: Int?
                if f.usesAutoBadge {
                    for try await b in try await conn.query(
                        """
                        UPDATE mpn_devices SET badge = badge + 1 WHERE device_id = \(f.deviceId) RETURNING badge
                        """, logger: self.logger
                    ).decode(Int32.self) { badge = Int(b) }
                }
                let e = f.entry(badge: badge, now: now)
                try await conn.query(
                    """
                    INSERT INTO mpn_outbox (\(unescaped: MPNSchema.outboxColumns), claimed_by) VALUES (\(e.id), \
                    \(e.subscriptionId), \(e.deviceId), \(e.payload), \(e.createdAt), \(e.status.rawValue), \(e.failure), \(moduleId))
                    """, logger: self.logger)
                written.append(e)
            }
            return written
        }
    }

    public func claimOutbox(moduleId: String, silentBefore: MPNTimestamp) async throws -> [MPNOutboxEntry] {
        // One statement: under READ COMMITTED a row another instance claimed meanwhile is
        // re-checked (its claimant is alive) and left to it.
        try await outboxRows(
            """
            UPDATE mpn_outbox SET claimed_by = \(moduleId) WHERE status = 'PENDING' \
            AND device_id IN (SELECT device_id FROM mpn_devices WHERE module_id = \(moduleId)) \
            AND (claimed_by IS NULL OR claimed_by = \(moduleId) OR claimed_by NOT IN \
                (SELECT module_id FROM mpn_modules WHERE last_activity >= \(silentBefore))) \
            RETURNING \(unescaped: MPNSchema.outboxColumns)
            """
        ).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func deleteOutboxEntry(id: String) async throws -> Bool {
        try await !strings("DELETE FROM mpn_outbox WHERE entry_id = \(id) RETURNING entry_id").isEmpty
    }

    public func failOutboxEntry(id: String, reason: String) async throws -> Bool {
        try await !strings(
            """
            UPDATE mpn_outbox SET status = 'FAILED', failure = \(reason) WHERE entry_id = \(id) RETURNING entry_id
            """
        ).isEmpty
    }

    public func outboxEntries(status: MPNOutboxStatus?) async throws -> [MPNOutboxEntry] {
        if let status {
            return try await outboxRows(
                """
                SELECT \(unescaped: MPNSchema.outboxColumns) FROM mpn_outbox WHERE status = \(status.rawValue) \
                ORDER BY created_at, entry_id
                """)
        }
        return try await outboxRows("SELECT \(unescaped: MPNSchema.outboxColumns) FROM mpn_outbox ORDER BY created_at, entry_id")
    }

    public var isShared: Bool { true }

    public func heartbeat(moduleId: String, now: MPNTimestamp) async throws {
        try await client.query(
            """
            INSERT INTO mpn_modules (module_id, last_activity) VALUES (\(moduleId), \(now)) \
            ON CONFLICT (module_id) DO UPDATE SET last_activity = EXCLUDED.last_activity
            """, logger: logger)
    }

    public func claimDevice(id: String, moduleId: String) async throws {
        try await client.query("UPDATE mpn_devices SET module_id = \(moduleId) WHERE device_id = \(id)", logger: logger)
    }

    public func claimOrphanedDevices(moduleId: String, silentBefore: MPNTimestamp) async throws -> Set<String> {
        // Under READ COMMITTED a row another instance claimed meanwhile is re-checked against the
        // condition (its new owner is alive) and left alone.
        try await client.query(
            """
            UPDATE mpn_devices SET module_id = \(moduleId) WHERE module_id IS NULL OR module_id NOT IN \
            (SELECT module_id FROM mpn_modules WHERE last_activity >= \(silentBefore))
            """, logger: logger)
        return Set(try await strings("SELECT device_id FROM mpn_devices WHERE module_id = \(moduleId)"))
    }

    public func removeModule(moduleId: String) async throws {
        try await client.query("DELETE FROM mpn_modules WHERE module_id = \(moduleId)", logger: logger)
    }

    public func deleteSubscription(id: String) async throws -> Bool {
        try await !strings("DELETE FROM mpn_subscriptions WHERE subscription_id = \(id) RETURNING subscription_id").isEmpty
    }

    public func deleteSubscriptions(deviceId: String, status: MPNSubscriptionStatus?) async throws -> [String] {
        // Sorted like `subscriptions(deviceId:status:)`.
        let doomed = try await subscriptions(deviceId: deviceId, status: status).map(\.id)
        var deleted = Set<String>()
        if let status {
            deleted = Set(
                try await strings(
                    """
                    DELETE FROM mpn_subscriptions WHERE device_id = \(deviceId) AND status = \(status.rawValue) RETURNING subscription_id
                    """))
        } else {
            deleted = Set(try await strings("DELETE FROM mpn_subscriptions WHERE device_id = \(deviceId) RETURNING subscription_id"))
        }
        return doomed.filter(deleted.contains) + deleted.subtracting(doomed).sorted()
    }

    // MARK: Row mapping

    private func devices(_ query: PostgresQuery) async throws -> [MPNDeviceRecord] {
        try await Self.decodeDevices(client.query(query, logger: logger))
    }

    private func subscriptionRows(_ query: PostgresQuery) async throws -> [MPNSubscriptionRecord] {
        var result: [MPNSubscriptionRecord] = []
        for try await row in try await client.query(query, logger: logger) {
            result.append(try Self.decodeSubscription(row.makeRandomAccess()))
        }
        return result
    }

    private func outboxRows(_ query: PostgresQuery) async throws -> [MPNOutboxEntry] {
        var result: [MPNOutboxEntry] = []
        for try await row in try await client.query(query, logger: logger) {
            let r = row.makeRandomAccess()
            result.append(
                MPNOutboxEntry(
                    id: try Self.cell(r, "entry_id", String.self),
                    subscriptionId: try Self.cell(r, "subscription_id", String.self),
                    deviceId: try Self.cell(r, "device_id", String.self),
                    payload: try Self.cell(r, "payload", String.self),
                    createdAt: try Self.cell(r, "created_at", Int64.self),
                    status: try StoreCodec.outboxStatus(Self.cell(r, "status", String.self)),
                    failure: try Self.cell(r, "failure", String?.self)))
        }
        return result
    }

    private func strings(_ query: PostgresQuery) async throws -> [String] {
        var result: [String] = []
        for try await s in try await client.query(query, logger: logger).decode(String.self) { result.append(s) }
        return result
    }

    private static func decodeDevices(_ rows: PostgresRowSequence) async throws -> [MPNDeviceRecord] {
        var result: [MPNDeviceRecord] = []
        for try await row in rows { result.append(try decodeDevice(row.makeRandomAccess())) }
        return result
    }

    private static func cell<T: PostgresDecodable>(_ row: PostgresRandomAccessRow, _ name: String, _ type: T.Type) throws -> T {
        guard row.contains(name) else { throw MPNStoreError("column \(name) missing") }
        return try row[name].decode(T.self)
    }

    private static func decodeDevice(_ r: PostgresRandomAccessRow) throws -> MPNDeviceRecord {
        MPNDeviceRecord(
            id: try cell(r, "device_id", String.self),
            platform: try StoreCodec.platform(cell(r, "platform", String.self)),
            applicationId: try cell(r, "application_id", String.self),
            deviceToken: try cell(r, "device_token", String.self),
            status: try StoreCodec.deviceStatus(cell(r, "status", String.self)),
            statusTimestamp: try cell(r, "status_timestamp", Int64.self),
            lastAccess: try cell(r, "last_access", Int64.self),
            badge: Int(try cell(r, "badge", Int32.self)),
            createdAt: try cell(r, "created_at", Int64.self))
    }

    private static func decodeSubscription(_ r: PostgresRandomAccessRow) throws -> MPNSubscriptionRecord {
        MPNSubscriptionRecord(
            id: try cell(r, "subscription_id", String.self),
            deviceId: try cell(r, "device_id", String.self),
            adapterSet: try cell(r, "adapter_set", String.self),
            dataAdapter: try cell(r, "data_adapter", String.self),
            group: try cell(r, "item_group", String.self),
            items: StoreCodec.splitNames(try cell(r, "items", String.self)),
            schema: try cell(r, "field_schema", String.self),
            fields: StoreCodec.splitNames(try cell(r, "fields", String.self)),
            mode: try StoreCodec.mode(cell(r, "mode", String.self)),
            notificationFormat: try cell(r, "notification_format", String.self),
            trigger: try cell(r, "trigger_expression", String?.self),
            bufferSize: try StoreCodec.bufferSize(cell(r, "buffer_size", String?.self)),
            maxFrequency: try StoreCodec.maxFrequency(cell(r, "max_frequency", String?.self)),
            status: try StoreCodec.subscriptionStatus(cell(r, "status", String.self)),
            statusTimestamp: try cell(r, "status_timestamp", Int64.self),
            createdAt: try cell(r, "created_at", Int64.self),
            lastTriggerTime: try cell(r, "last_trigger_time", Int64?.self))
    }
}
