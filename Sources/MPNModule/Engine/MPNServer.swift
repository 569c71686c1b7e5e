import LightstreamerServer
import Logging
import ServiceLifecycle

/// A TLCP server with the MPN Module: the internal MPN Data Adapter added to every adapter set
/// with MPN enabled, one item engine shared by sessions and MPN subscriptions, the configured
/// store and providers.
///
/// ```swift
/// let server = try await LightstreamerMPNServer.make(options: options, adapterSets: sets, mpn: config)
/// try await server.run()   // or start() … shutdown()
/// ```
public final class LightstreamerMPNServer: Service, Sendable {
    public let server: LightstreamerServer
    public let module: MPNModule
    let logger: Logger

    init(server: LightstreamerServer, module: MPNModule, logger: Logger) {
        self.server = server
        self.module = module
        self.logger = logger
    }

    /// Assembles the server; opens (and migrates) the store. With `mpn.enabled == false` the
    /// module answers every MPN request with 40.
    /// - Parameter providers: fixed providers (tests); nil builds them from the configuration.
    public static func make(options: ServerOptions, adapterSets: [AdapterSet], mpn configuration: MPNConfiguration,
                            providers: MPNProviderRegistry? = nil,
                            logger: Logger = Logger(label: "lightstreamer.server")) async throws -> LightstreamerMPNServer {
        let internalAdapter = MPNInternalDataAdapter()
        let sets = adapterSets.map { set -> AdapterSet in
            guard configuration.isEnabled(for: set.name) else { return set }
            var s = set
            s.dataAdapters[configuration.internalDataAdapterName] = internalAdapter
            s.serverOwnedDataAdapters.insert(configuration.internalDataAdapterName)
            return s
        }
        // The MONITOR adapter set feeds the dashboard (docs/ADMIN.md).
        let engine = ItemEngine(adapterSets: MonitorAdapters.adding(to: sets), logger: logger)
        let store = try await MPNModule.openStore(configuration.store)
        // The server's metrics backend (a registry of its own by default, exported on /metrics).
        let metrics = MPNMetrics(backend: options.metrics)
        let registry = providers ?? MPNProviderRegistry(configuration: configuration, logger: Logger(label: "lightstreamer.mpn"),
                                                        metrics: metrics)
        let module = MPNModule(configuration: configuration, store: store, providers: registry, itemEngine: engine,
                               internalAdapter: internalAdapter, logger: Logger(label: "lightstreamer.mpn"), metrics: metrics)
        let server = LightstreamerServer(options: options, engine: engine, mpn: module, logger: logger)
        server.setMPNAdminHook(MPNAdminBridge(module: module))
        // Not ready while the module's heartbeats fail (checked every moduleCheckPeriodMillis).
        let health = server.health
        await module.setHealthReporter { failure in health.setCondition("mpnStore", failure: failure) }
        return LightstreamerMPNServer(server: server, module: module, logger: logger)
    }

    /// The port the server listens on, once started.
    public var port: Int? { server.port }

    /// Reloads devices and subscriptions (their items are subscribed again), then binds.
    public func start() async throws {
        try await module.start()
        do {
            try await server.start()
        } catch {
            await module.shutdown()
            throw error
        }
    }

    /// Stops the MPN subscriptions and providers, then the sessions and the engine.
    public func shutdown() async {
        await module.shutdown()
        await server.shutdown()
    }

    /// Starts (if needed), serves until graceful shutdown or cancellation, drains the sessions
    /// (`LightstreamerServer.drain`: the MPN Module keeps running meanwhile), then shuts down.
    public func run() async throws {
        if port == nil { try await start() }
        try? await gracefulShutdown()
        await server.drain()
        await shutdown()
    }
}
