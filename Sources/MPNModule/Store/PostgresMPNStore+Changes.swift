import PostgresNIO

extension PostgresMPNStore {
    /// How often the listening connection is checked with a query, and how long it may take.
    /// A connection that died without a word (a dropped route, a firewall's idle timeout) would
    /// otherwise wait for notifications forever.
    static let listenProbePeriod: Duration = .seconds(10)
    static let listenProbeTimeout: Duration = .seconds(5)

    /// Listens on the change channel (`MPNSchema.postgresMigrations`) on one pooled connection
    /// and reports `.resync` once listening, then `.device(id)` for every announced change of
    /// this store's schema, including its own. Runs until the task is cancelled (returns) or the
    /// connection fails or stops answering its probe (throws); the caller listens again, and
    /// handles the new `.resync`.
    public func watchChanges(_ onChange: @escaping @Sendable (MPNStoreChange) -> Void) async throws {
        let logger = self.logger
        try await client.withConnection { conn in
            var found: (String, Int32)?
            for try await row in try await conn.query("SELECT current_schema(), pg_backend_pid()", logger: logger)
                .decode((String, Int32).self)
            { found = row }
            guard let (schema, pid) = found else { throw MPNStoreError("no current schema to watch") }
            self.listeningBackend.withLockedValue { $0 = pid }
            let prefix = schema + " "
            try await conn.listen(on: MPNSchema.changeChannel) { notifications in
                onChange(.resync)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await n in notifications where n.payload.hasPrefix(prefix) {
                            let device = String(n.payload.dropFirst(prefix.count))
                            if !device.isEmpty { onChange(.device(device)) }
                        }
                    }
                    group.addTask {
                        while true {
                            try await Task.sleep(for: Self.listenProbePeriod)
                            try await Self.probe(conn, logger: logger)
                        }
                    }
                    // The first to end (the notifications, or a failed probe) ends the watch.
                    defer { group.cancelAll() }
                    try await group.next()
                }
            }
        }
    }

    /// `SELECT 1` on the connection within `listenProbeTimeout`; past it the connection is
    /// closed (which also fails the query) and the probe throws.
    private static func probe(_ conn: PostgresConnection, logger: Logger) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                _ = try await conn.query("SELECT 1", logger: logger)
                return true
            }
            group.addTask {
                try await Task.sleep(for: listenProbeTimeout)
                return false
            }
            defer { group.cancelAll() }
            guard try await group.next() == true else {
                try? await conn.close()
                throw MPNStoreError("the listening connection did not answer within \(listenProbeTimeout)")
            }
        }
    }
}
