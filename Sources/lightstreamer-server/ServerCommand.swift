import ArgumentParser
import Foundation
import LightstreamerServer
import Logging
import MPNModule
import Metrics
import Prometheus
import ServiceLifecycle

/// `lightstreamer-server`: serves TLCP on HTTP and WebSocket. With no flags it serves the DEMO
/// adapter set (also as DEFAULT) on http://127.0.0.1:8080.
@main
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lightstreamer-server",
        abstract: "A Lightstreamer (TLCP 2.5) server: WebSocket and HTTP, streaming and polling.")

    @Option(help: "Address to listen on (default 127.0.0.1, or the configuration's).")
    var host: String?

    @Option(help: "Port to listen on (default 8080, or the configuration's; 0 picks a free one).")
    var port: Int?

    @Option(name: .customLong("config"), help: "JSON configuration file (adapter sets, timeouts, TLS, URL prefix).")
    var configFile: String?

    @Option(
        name: .customLong("mpn-store"),
        help: "SQLite file of the MPN Module (default mpn.sqlite; overrides the configuration's store).")
    var mpnStore: String?

    @Flag(name: .customLong("no-mpn"), help: "Serve without the MPN Module (MPN requests refused with 40).")
    var noMPN = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(name: .customLong("log-format"), help: "text, or json: one JSON object per line (default: the configuration's, or text).")
    var logFormat: String?

    @Option(
        name: .customLong("node-name"),
        help: "This node's name in SERVNAME, logs and /metrics (default: the configuration's, or the host name).")
    var nodeName: String?

    @Option(
        name: .customLong("control-link"),
        help: "host[:port][/prefix] sent in CONOK, where clients send binds and new connections (default: the configuration's, or *).")
    var controlLink: String?

    @Option(
        name: .customLong("drain-millis"),
        help:
            "On SIGTERM or SIGINT: how long sessions may stay while new ones are refused, before they are told to move (default 0, or the configuration's)."
    )
    var drainMillis: Int?

    func validate() throws {
        if let nodeName {
            do { _ = try NodeName.validated(nodeName) } catch { throw ValidationError("--node-name: \(error)") }
        }
        if let controlLink {
            do { _ = try ControlLink.validated(controlLink) } catch { throw ValidationError("--control-link: \(error)") }
        }
        if let logFormat, !ServerConfiguration.logFormats.contains(logFormat) {
            throw ValidationError("--log-format: expected text or json, got \(logFormat)")
        }
        if let drainMillis, !(0...ServerOptions.maxDrainMillis).contains(drainMillis) {
            throw ValidationError("--drain-millis: expected 0 to \(ServerOptions.maxDrainMillis), got \(drainMillis)")
        }
    }

    func run() async throws {
        // First: this may execute the program again, on mimalloc (docs/CONFIG.md, "Memory allocator").
        let allocator = ProcessAllocator.adopt()
        // The configuration is read before logging starts, so that every line carries the node.
        var configuration: ServerConfiguration?
        if let configFile {
            do {
                configuration = try ServerConfiguration.load(path: configFile)
            } catch {
                throw ValidationError("\(error)")
            }
        }
        let node = try nodeName.map { try NodeName.validated($0) } ?? configuration?.nodeName ?? NodeName.hostDefault
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let json = (logFormat ?? configuration?.logFormat ?? "text") == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler.standardError(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            handler[metadataKey: "node"] = "\(node)"
            return handler
        }
        // The executable owns the process: swift-metrics of every library go to the registry
        // that /metrics exports (the server itself never bootstraps; docs/METRICS.md).
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let logger = Logger(label: "lightstreamer.server")
        logger.info("memory allocator", metadata: ["malloc": "\(allocator)"])
        var options: ServerOptions
        let sets: [AdapterSet]
        var mpn = MPNConfiguration.demoDefault()
        if let configuration, let configFile {
            options = ServerOptions(configuration: configuration, host: host, port: port)
            sets = configuration.makeAdapterSets()
            do {
                mpn = try MPNConfiguration(serverConfiguration: configuration)
            } catch {
                throw ValidationError("\(configFile): mpn: \(error)")
            }
        } else {
            options = ServerOptions(host: host ?? ServerConfiguration.defaultHost, port: port ?? ServerConfiguration.defaultPort)
            sets = [DemoAdapters.makeDemoAdapterSet()]
        }
        // The first adapter set (DEMO without a configuration) is also served as DEFAULT.
        if !sets.contains(where: { $0.name == "DEFAULT" }), let first = sets.first {
            options.adapterSetAliases["DEFAULT"] = first.name
        }
        options.sessions.nodeName = node
        options.metrics = .prometheus(registry)
        if let controlLink { options.sessions.controlLink = try ControlLink.validated(controlLink) }
        if let drainMillis { options.drainMillis = drainMillis }
        if let mpnStore { mpn.store = .init(sqlitePath: mpnStore) }
        if noMPN { mpn.enabled = false }
        // The MPN store, the module and the server as separate services: a graceful shutdown
        // stops them in reverse (the server drains and stops first, the store closes last).
        let services: [any Service]
        let port: Int?
        if mpn.enabled {
            let server = try await LightstreamerMPNServer.make(options: options, adapterSets: sets, mpn: mpn, logger: logger)
            try await server.start()
            let where_ = mpn.store.postgresURL != nil ? "PostgreSQL" : (mpn.store.sqlitePath ?? "")
            logger.info("MPN Module enabled", metadata: ["store": "\(where_)"])
            (services, port) = (server.services, server.port)
        } else {
            let server = LightstreamerServer(options: options, adapterSets: sets, logger: logger)
            try await server.start()
            (services, port) = ([server], server.port)
        }
        let scheme = options.tlsCertificateChainFile == nil ? "http" : "https"
        let ready = "lightstreamer-server ready on \(scheme)://\(options.host):\(port ?? options.port)\n"
        logger.info("node", metadata: ["controlLink": "\(options.sessions.controlLink)", "drainMillis": "\(options.drainMillis)"])
        FileHandle.standardOutput.write(Data(ready.utf8))
        let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }
}
