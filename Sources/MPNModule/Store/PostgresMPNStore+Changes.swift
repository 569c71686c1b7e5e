import PostgresNIO

extension PostgresMPNStore {
    /// Listens on the change channel (`MPNSchema.postgresMigrations`) on one pooled connection
    /// and reports `.resync` once listening, then `.device(id)` for every announced change of
    /// this store's schema, including its own. Runs until the task is cancelled (returns) or the
    /// connection fails (throws); the caller listens again, and handles the new `.resync`.
    public func watchChanges(_ onChange: @escaping @Sendable (MPNStoreChange) -> Void) async throws {
        try await client.withConnection { conn in
            var schema: String?
            for try await name in try await conn.query("SELECT current_schema()", logger: self.logger).decode(String.self) {
                schema = name
            }
            guard let schema else { throw MPNStoreError("no current schema to watch") }
            let prefix = schema + " "
            try await conn.listen(on: MPNSchema.changeChannel) { notifications in
                onChange(.resync)
                for try await n in notifications where n.payload.hasPrefix(prefix) {
                    let device = String(n.payload.dropFirst(prefix.count))
                    if !device.isEmpty { onChange(.device(device)) }
                }
            }
        }
    }
}
