import ArgumentParser
import Foundation
import LightstreamerServer
import Logging
import MPNModule
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

    @Option(name: .customLong("mpn-store"),
            help: "SQLite file of the MPN Module (default mpn.sqlite; overrides the configuration's store).")
    var mpnStore: String?

    @Flag(name: .customLong("no-mpn"), help: "Serve without the MPN Module (MPN requests refused with 40).")
    var noMPN = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "lightstreamer.server")
        var options: ServerOptions
        let sets: [AdapterSet]
        var mpn = MPNConfiguration.demoDefault()
        if let configFile {
            let configuration: ServerConfiguration
            do {
                configuration = try ServerConfiguration.load(path: configFile)
            } catch {
                throw ValidationError("\(error)")
            }
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
        if let mpnStore { mpn.store = .init(sqlitePath: mpnStore) }
        if noMPN { mpn.enabled = false }
        let service: any Service
        let port: Int?
        if mpn.enabled {
            let server = try await LightstreamerMPNServer.make(options: options, adapterSets: sets, mpn: mpn, logger: logger)
            try await server.start()
            let where_ = mpn.store.postgresURL != nil ? "PostgreSQL" : (mpn.store.sqlitePath ?? "")
            logger.info("MPN Module enabled", metadata: ["store": "\(where_)"])
            (service, port) = (server, server.port)
        } else {
            let server = LightstreamerServer(options: options, adapterSets: sets, logger: logger)
            try await server.start()
            (service, port) = (server, server.port)
        }
        let scheme = options.tlsCertificateChainFile == nil ? "http" : "https"
        let ready = "lightstreamer-server ready on \(scheme)://\(options.host):\(port ?? options.port)\n"
        FileHandle.standardOutput.write(Data(ready.utf8))
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
