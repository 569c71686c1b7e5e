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
///
/// As a `Service` it runs its parts (`services`) in a `ServiceGroup` of its own; an embedder
/// may list `services` in its own group instead.
public final class LightstreamerMPNServer: Service, Sendable {
    public let server: LightstreamerServer
    public let module: MPNModule
    /// The store of the module (closed by `MPNStoreService`, not by `shutdown()`).
    public let store: any MPNStore
    let logger: Logger

    init(server: LightstreamerServer, module: MPNModule, store: any MPNStore, logger: Logger) {
        self.server = server
        self.module = module
        self.store = store
        self.logger = logger
    }

    /// Assembles the server; opens (and migrates) the store. With `mpn.enabled == false` the
    /// module answers every MPN request with 40.
    /// - Parameter providers: fixed providers (tests); nil builds them from the configuration.
    public static func make(
        options: ServerOptions, adapterSets: [AdapterSet], mpn configuration: MPNConfiguration,
        providers: MPNProviderRegistry? = nil,
        logger: Logger = Logger(label: "lightstreamer.server")
    ) async throws -> LightstreamerMPNServer {
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
        let store = try await MPNModule.openStore(configuration.store, eventLoopGroup: options.sharedEventLoopGroup)
        // The server's metrics backend (a registry of its own by default, exported on /metrics).
        let metrics = MPNMetrics(backend: options.metrics)
        let registry =
            providers
            ?? MPNProviderRegistry(
                configuration: configuration, logger: Logger(label: "lightstreamer.mpn"),
                metrics: metrics)
        let module = MPNModule(
            configuration: configuration, store: store, providers: registry, itemEngine: engine,
            internalAdapter: internalAdapter, logger: Logger(label: "lightstreamer.mpn"), metrics: metrics)
        let server = LightstreamerServer(options: options, engine: engine, mpn: module, logger: logger)
        server.setMPNAdminHook(MPNAdminBridge(module: module))
        // Not ready while the module's heartbeats fail (checked every moduleCheckPeriodMillis).
        let health = server.health
        await module.setHealthReporter { failure in health.setCondition("mpnStore", failure: failure) }
        return LightstreamerMPNServer(server: server, module: module, store: store, logger: logger)
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

    /// The parts of this server as services, in `ServiceGroup` order: the store
    /// (`MPNStoreService`), the MPN Module, then the server (started after the module). A group
    /// shuts them down in reverse: the server drains and stops first, the store is closed last.
    /// Call `start()` before running them to bind before the group starts.
    public var services: [any Service] {
        [MPNStoreService(store: store), module, MPNFrontService(server: self)]
    }

    /// Starts (if needed), then runs `services` in a group of their own until graceful shutdown
    /// or cancellation: the server drains its sessions (`LightstreamerServer.drain`: the MPN
    /// Module keeps running meanwhile) and stops, then the module, then the store is closed.
    public func run() async throws {
        if port == nil { try await start() }
        let group = ServiceGroup(services: services, logger: logger)
        try await group.run()
    }
}

/// The server part of a `LightstreamerMPNServer` as a service: starts the MPN Module and the
/// server when they are not running yet, then serves as `LightstreamerServer.run()` does.
struct MPNFrontService: Service {
    let server: LightstreamerMPNServer

    func run() async throws {
        if server.port == nil { try await server.start() }
        try await server.server.run()
    }
}
