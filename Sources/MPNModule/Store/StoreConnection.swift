import NIOConcurrencyHelpers

/// A store's connection (a SQLite pool, a PostgreSQL client), handed out until the store's
/// `close()`: once that has begun, a request fails with `MPNStoreError.closed`, at once and with
/// that reason, rather than with what the closed connection reports (GRDB: "SQLite error 21: out
/// of memory", which would send an operator looking for a memory problem; postgres-nio: the
/// pool's `poolShutdown`).
struct StoreConnection<Connection: Sendable>: Sendable {
    private let connection: Connection
    private let closed = NIOLockedValueBox(false)

    init(_ connection: Connection) { self.connection = connection }

    /// The connection, or `MPNStoreError.closed` once `close()` has begun.
    var open: Connection {
        get throws {
            if closed.withLockedValue({ $0 }) { throw MPNStoreError.closed }
            return connection
        }
    }

    /// Refuses every later request (the store's `close()` has begun); the connection, for the
    /// store to shut it down.
    func refuseRequests() -> Connection {
        closed.withLockedValue { $0 = true }
        return connection
    }
}
