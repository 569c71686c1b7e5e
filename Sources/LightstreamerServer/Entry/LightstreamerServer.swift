import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import TLCP

/// The embeddable TLCP server: `start()` binds, `shutdown()` ends every session and stops;
/// `run()` does both around a graceful-shutdown wait, as a swift-service-lifecycle `Service`.
public final class LightstreamerServer: Service, Sendable {
    /// The options the server was made with.
    public let options: ServerOptions
    /// The server's counters and gauges (`/metrics`).
    public let metrics: ServerMetrics
    /// Liveness and readiness (`/health/live`, `/health/ready`).
    public let health: ServerHealth
    let manager: SessionManager
    let engine: ItemEngine
    let logger: Logger
    /// The administrator's actions (also behind the admin HTTP API, docs/ADMIN.md).
    public let admin: AdminActions
    let web: WebFront

    private struct State {
        var group: (any EventLoopGroup)?
        var ownsGroup = false
        var channel: (any Channel)?
        var adminChannel: (any Channel)?
        var stopped = false
    }

    private let state = NIOLockedValueBox(State())

    /// A server over an item engine. `mpn` serves the MPN operations (the MPN Module); without
    /// it they are refused with 40.
    public init(
        options: ServerOptions, engine: ItemEngine, mpn: (any MPNRequestHandler)? = nil,
        logger: Logger = Logger(label: "lightstreamer.server")
    ) {
        self.options = options
        self.engine = engine
        self.logger = logger
        let health = ServerHealth()
        self.health = health
        let remotes = Array(engine.adapterSets.values)
        self.metrics = ServerMetrics(
            nodeName: options.sessions.nodeName, health: health,
            remoteEndpoints: remotes.flatMap(\.remoteEndpoints), backend: options.metrics)
        self.manager = SessionManager(
            engine: engine, settings: options.sessions, metrics: metrics, logger: logger,
            aliases: options.adapterSetAliases, mpn: mpn, health: health)
        let actions = AdminActions(manager: manager, engine: engine)
        self.admin = actions
        let api = AdminAPI(credentials: options.admin, actions: actions)
        let site = StaticSite.load(directory: options.webRoot.map { URL(fileURLWithPath: $0) } ?? StaticSite.defaultDirectory())
        self.web = WebFront(site: site, admin: api)
        Self.attachMonitor(engine: engine, manager: manager, actions: actions, api: api)
    }

    /// Connects the `MONITOR` adapter set (when the engine serves ours) to this server.
    private static func attachMonitor(engine: ItemEngine, manager: SessionManager, actions: AdminActions, api: AdminAPI) {
        guard let set = engine.adapterSet(named: MonitorAdapters.adapterSetName),
            let data = set.dataAdapters[AdapterSet.defaultDataAdapterName] as? MonitorDataAdapter,
            let metadata = set.metadata as? MonitorMetadataAdapter
        else { return }
        metadata.attach { [weak api] user, password, ip in api?.monitorLoginAllowed(user: user, password: password, clientIP: ip) ?? false }
        data.attach(
            MonitorSource { [weak manager, weak actions] in
                let now = monotonicMillis()
                let sessions = manager?.allSessions.map { $0.summary(now: now) } ?? []
                let mpn = await actions?.mpn?.monitorFigures()
                return MonitorInputs(
                    nowMillis: now, counters: manager?.metrics.snapshot ?? ServerMetrics.Snapshot(),
                    updatesReceived: engine.updatesReceived, updatesFiltered: engine.updatesFiltered,
                    items: engine.upstreamItemCount,
                    sessions: sessions, sessionsBlocked: actions?.newSessionsBlocked ?? false, mpn: mpn)
            })
    }

    /// Where the MPN Module plugs in its figures and actions (docs/ADMIN.md).
    public func setMPNAdminHook(_ hook: (any MPNAdminHook)?) {
        admin.setMPNHook(hook)
    }

    /// A server over these adapter sets, with its own item engine.
    public convenience init(options: ServerOptions, adapterSets: [AdapterSet], logger: Logger = Logger(label: "lightstreamer.server")) {
        self.init(
            options: options, engine: ItemEngine(adapterSets: MonitorAdapters.adding(to: adapterSets), logger: logger),
            logger: logger)
    }

    /// The adapter sets with remote adapters.
    var remoteAdapterSets: [AdapterSet] {
        engine.adapterSets.values.filter { !$0.remoteEndpoints.isEmpty }.sorted { $0.name < $1.name }
    }

    /// The port the server listens on, once started.
    public var port: Int? { state.withLockedValue { $0.channel?.localAddress?.port } }

    /// The port of the admin listener (`/metrics`), once started, when there is one.
    public var adminPort: Int? { state.withLockedValue { $0.adminChannel?.localAddress?.port } }

    /// The event loop of the listening socket, once started.
    var listeningEventLoop: (any EventLoop)? { state.withLockedValue { $0.channel?.eventLoop } }

    /// The listening socket's channel while the server runs (tests keep it to check that a
    /// shutdown closed it: connecting to the port could reach another server that took it).
    @_spi(Testing) public var listeningChannel: (any Channel)? { state.withLockedValue { $0.channel } }

    /// Live sessions.
    public var sessionCount: Int { manager.sessionCount }

    /// Binds the listening socket. Throws if it cannot.
    public func start() async throws {
        let sslContext: NIOSSLContext?
        if let certFile = options.tlsCertificateChainFile, let keyFile = options.tlsPrivateKeyFile {
            sslContext = try ServerConfiguration.TLS(certificateChainPath: certFile, privateKeyPath: keyFile)
                .makeServerContext(minimumVersion: options.front.tlsMinimumVersion)
        } else {
            sslContext = nil
        }
        let (group, ownsGroup) = options.makeEventLoopGroup()
        let maxConnections = FileDescriptorBudget.connectionCap(
            configured: options.front.maxConnections,
            openFilesLimit: FileDescriptorBudget.openFilesSoftLimit)
        if maxConnections < options.front.maxConnections {
            logger.warning(
                "maxConnections lowered to fit the open-files limit (ulimit -n)",
                metadata: ["configured": "\(options.front.maxConnections)", "used": "\(maxConnections)"])
        }
        let limiter = ConnectionLimiter(maxConnections: maxConnections, maxPerAddress: options.front.maxConnectionsPerAddress)
        let initializer = FrontChannelInitializer(
            manager: manager, web: web, urlPrefix: options.normalizedPrefix, sslContext: sslContext,
            logger: logger, front: options.front, limiter: limiter)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // Accept many connections per loop iteration (NIO's default is 4): when the loop is
            // busy writing updates, iterations are long and new clients would wait. More than
            // the backlog, so that one readiness of the listening socket empties its queue: with
            // 256, a loop at full load left connections queued that no later readiness reported,
            // and stopped accepting (3 s with a full queue and not one accept4 call, the load
            // tool's connects timing out past 4,200 sessions; BENCHMARKS.md, "Batches handled
            // during the hand-over").
            .serverChannelOption(.maxMessagesPerRead, value: 2048)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.recvAllocator, value: Self.receiveBuffers)
            // One read per readiness (the socket is polled level-triggered, so what is left is
            // read at the next turn). NIO keeps up to this many read buffers per connection,
            // for as long as it lives: with 4, a request cut over reads while the HTTP decoder
            // held the first part left two or three buffers with every idle WebSocket (1.8 KB
            // for a browser's 792-byte upgrade request, 0.6 KB after; BENCHMARKS.md, "The load
            // tool on its own core; headers kept only when read; read buffers"). Clients send
            // little, so the extra turns cost nothing measurable.
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelOption(.writeBufferWaterMark, value: Self.writeBufferWaterMark)
            .childChannelInitializer { channel in initializer.initialize(channel) }
        if let option = SocketUnsentLimit.option, let value = SocketUnsentLimit.value(for: options.front.maxSocketUnsentBytes) {
            _ = bootstrap.childChannelOption(option, value: value)
        }
        let channel: any Channel
        var adminChannel: (any Channel)?
        do {
            // Remote adapters connect first: the adapter sets are served once they are there
            // (or once each set's wait is over).
            try await RemoteAdapterStartup.start(remoteAdapterSets, group: group, logger: logger)
            channel = try await bootstrap.bind(host: options.host, port: options.port).get()
            if let admin = options.front.adminListener {
                adminChannel = try await bindAdmin(host: admin.host, port: admin.port, group: group)
            }
        } catch {
            await RemoteAdapterStartup.stop(remoteAdapterSets)
            if ownsGroup { try? await group.shutdownGracefully() }
            throw error
        }
        state.withLockedValue {
            $0.group = group
            $0.ownsGroup = ownsGroup
            $0.channel = channel
            $0.adminChannel = adminChannel
        }
        health.markStarted()
        logger.info(
            "listening",
            metadata: [
                "host": "\(options.host)", "port": "\(channel.localAddress?.port ?? 0)",
                "tls": "\(sslContext != nil)", "prefix": "\(options.normalizedPrefix)",
            ])
    }

    /// Read buffers of client connections: 128 bytes kept with each connection (TLCP requests
    /// are short), larger ones only for the reads that need them (`FrontReadBuffers`: NIO's
    /// adaptive allocator left every idle WebSocket with a buffer as large as its upgrade
    /// request had needed).
    static let receiveBuffers = FrontReadBuffers(base: 128, maximum: 65_536)

    /// When a client connection stops being writable (what waits for the socket, which the
    /// kernel would not take with `FrontOptions.maxSocketUnsentBytes` waiting there unsent,
    /// passes `high`) and becomes writable again (below `low`). The session streaming on it
    /// (WebSocket or HTTP) stops writing table events meanwhile, and its MERGE updates fold
    /// into the latest of each item (`ServerSession.outputBlocked`), so what the server holds
    /// for a client that reads slower than its updates come is about `high` bytes of frames,
    /// not a backlog growing towards `maxBacklogBytes`. The kernel's buffers (the unsent bytes,
    /// and what is in flight) do the buffering a reader that keeps up needs, so the mark can be
    /// low: with 16,000 sessions unread (before the unsent limit), NIO's default of 64 KiB held
    /// 3.8 GB, 16 KiB 1.06 GB, 4 KiB 0.62 GB,
    /// while CPU per update and latency at 1,000 and 5,000 reading sessions did not move
    /// (BENCHMARKS.md, "Slow readers" and "A lower water mark"; ARCHITECTURE.md, "One update,
    /// end to end", step 11).
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 2 * 1024, high: 4 * 1024)

    /// The admin listener: `/metrics` and the health endpoints, plain HTTP, a few connections.
    private func bindAdmin(host: String, port: Int, group: any EventLoopGroup) async throws -> any Channel {
        let (metrics, health, nodeName, web) = (self.metrics, self.health, options.sessions.nodeName, self.web)
        let limiter = ConnectionLimiter(maxConnections: 64, maxPerAddress: 64)
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let address = channel.remoteAddress?.ipAddress ?? ""
                guard limiter.admit(address) else { return channel.eventLoop.makeFailedFuture(ConnectionRefused()) }
                channel.closeFuture.whenComplete { _ in limiter.release(address) }
                return channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(
                        AdminHTTPHandler(
                            metrics: metrics, health: health, nodeName: nodeName,
                            web: web))
                }
            }
            .bind(host: host, port: port).get()
    }

    /// Ends every session (END 32), closes the listening socket and stops the engine.
    public func shutdown() async {
        let (channel, adminChannel, group, ownsGroup) = state.withLockedValue {
            s -> ((any Channel)?, (any Channel)?, (any EventLoopGroup)?, Bool) in
            guard !s.stopped else { return (nil, nil, nil, false) }
            s.stopped = true
            defer {
                s.channel = nil
                s.adminChannel = nil
                s.group = nil
            }
            return (s.channel, s.adminChannel, s.group, s.ownsGroup)
        }
        guard let group else { return }
        manager.closeAll()
        try? await channel?.close()
        try? await adminChannel?.close()
        // The END lines were handed to the connections' event loops: let them be written.
        await Self.runQueuedTasks(of: group)
        await engine.shutdown()
        await RemoteAdapterStartup.stop(remoteAdapterSets)
        // A group the server was given (or the shared singleton) goes on serving others.
        if ownsGroup { try? await group.shutdownGracefully() }
        logger.info("stopped")
    }

    /// Returns once every task queued so far on each of the group's event loops has run.
    private static func runQueuedTasks(of group: any EventLoopGroup) async {
        for loop in group.makeIterator() { try? await loop.submit {}.get() }
    }

    /// Starts (if needed), serves until graceful shutdown or cancellation, drains (`drain()`;
    /// cut short on cancellation), then shuts down.
    public func run() async throws {
        if port == nil { try await start() }
        // Returns on graceful shutdown, throws on cancellation: either way the server stops.
        try? await gracefulShutdown()
        await drain()
        await shutdown()
    }
}
