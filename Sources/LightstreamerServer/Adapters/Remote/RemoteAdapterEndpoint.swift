import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// One remote adapter of an adapter set as the server runs it: the configured address its
/// remote connects to, the connection the adapter talks through, and the listener once the
/// server started. `LightstreamerServer.start()` binds every endpoint of its adapter sets and
/// waits for their remotes; `shutdown()` says `CLOSE` and stops listening.
public final class RemoteAdapterEndpoint: Sendable {
    /// The adapter set the remote adapter belongs to.
    public let adapterSet: String
    /// The Data Adapter's name; nil for the Metadata Adapter.
    public let dataAdapter: String?
    /// The configured listening address.
    public let host: String
    /// The configured port (0: any free port).
    public let port: Int
    /// PEM files when the remote connects with TLS.
    public let tls: ServerConfiguration.TLS?
    let connection: RemoteAdapterConnection
    private let logger: Logger
    private let listener = NIOLockedValueBox<RemoteAdapterListener?>(nil)

    init(
        adapterSet: String, dataAdapter: String?, host: String, port: Int, tls: ServerConfiguration.TLS? = nil,
        connection: RemoteAdapterConnection, logger: Logger = Logger(label: "lightstreamer.remote")
    ) {
        self.adapterSet = adapterSet
        self.dataAdapter = dataAdapter
        self.host = host
        self.port = port
        self.tls = tls
        self.connection = connection
        self.logger = logger
    }

    /// "metadata" or "data:<name>", for logs and metric labels.
    public var role: String { dataAdapter.map { "data:\($0)" } ?? "metadata" }

    /// The bound port (differs from `port` when that is 0), once started.
    public var boundPort: Int? { listener.withLockedValue { $0?.port } }

    /// Whether a remote is connected and past its handshake.
    public var isConnected: Bool { connection.isReady }

    var counters: RemoteConnectionCounters { connection.counters }

    /// The TLS context of the port, nil without TLS; a `TLSFilesError` names the file and the problem.
    func loadTLS() throws -> NIOSSLContext? {
        try tls?.makeServerContext()
    }

    /// Binds the port, with TLS when `sslContext` is given (see `loadTLS()`).
    func start(group: any EventLoopGroup, sslContext: NIOSSLContext?) async throws {
        let bound = try await RemoteAdapterListener.bind(
            host: host, port: port, connection: connection, sslContext: sslContext,
            logger: logger, group: group)
        listener.withLockedValue { $0 = bound }
    }

    func waitUntilConnected(timeoutMillis: Int64, on eventLoop: any EventLoop) async -> Bool {
        await connection.waitUntilReady(timeout: .milliseconds(max(0, timeoutMillis)), on: eventLoop)
    }

    func stop(reason: String) async {
        let bound = listener.withLockedValue { l -> RemoteAdapterListener? in
            defer { l = nil }
            return l
        }
        await bound?.close(reason: reason)
    }
}

/// Starting and stopping the remote endpoints of a server's adapter sets.
enum RemoteAdapterStartup {
    /// Checks every endpoint's TLS files, binds every endpoint, then waits for each set's
    /// remotes at most its `remoteWaitMillis` (all sets wait at the same time). A remote that is late is logged; its adapter set is
    /// served anyway and its requests fail until the remote connects.
    static func start(_ sets: [AdapterSet], group: any EventLoopGroup, logger: Logger) async throws {
        let endpoints = sets.flatMap(\.remoteEndpoints)
        guard !endpoints.isEmpty else { return }
        // Every TLS file is checked before any port is bound.
        var contexts: [NIOSSLContext?] = []
        for e in endpoints {
            do {
                contexts.append(try e.loadTLS())
            } catch {
                logger.error(
                    "remote adapter port cannot start",
                    metadata: [
                        "adapterSet": "\(e.adapterSet)", "role": "\(e.role)",
                        "error": "\(error)",
                    ])
                throw error
            }
        }
        for (e, context) in zip(endpoints, contexts) {
            try await e.start(group: group, sslContext: context)
            logger.info(
                "waiting for remote adapter",
                metadata: [
                    "adapterSet": "\(e.adapterSet)", "role": "\(e.role)",
                    "address": "\(e.host):\(e.boundPort ?? e.port)",
                    "tls": "\(e.tls != nil)",
                ])
        }
        await withTaskGroup(of: Void.self) { tasks in
            for set in sets {
                for e in set.remoteEndpoints {
                    tasks.addTask {
                        let ok = await e.waitUntilConnected(timeoutMillis: set.remoteWaitMillis, on: group.next())
                        if !ok {
                            logger.error(
                                "remote adapter did not connect in time; its requests fail until it does",
                                metadata: [
                                    "adapterSet": "\(e.adapterSet)", "role": "\(e.role)",
                                    "waitedMillis": "\(set.remoteWaitMillis)",
                                ])
                        }
                    }
                }
            }
        }
    }

    static func stop(_ sets: [AdapterSet]) async {
        for e in sets.flatMap(\.remoteEndpoints) { await e.stop(reason: "server shutting down") }
    }
}
