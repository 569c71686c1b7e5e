import ArgumentParser
import Foundation
import LightstreamerServer
import Logging
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
        if let configFile {
            let configuration: ServerConfiguration
            do {
                configuration = try ServerConfiguration.load(path: configFile)
            } catch {
                throw ValidationError("\(error)")
            }
            options = ServerOptions(configuration: configuration, host: host, port: port)
            sets = configuration.makeAdapterSets()
        } else {
            options = ServerOptions(host: host ?? ServerConfiguration.defaultHost, port: port ?? ServerConfiguration.defaultPort)
            sets = [DemoAdapters.makeDemoAdapterSet()]
        }
        // The first adapter set (DEMO without a configuration) is also served as DEFAULT.
        if !sets.contains(where: { $0.name == "DEFAULT" }), let first = sets.first {
            options.adapterSetAliases["DEFAULT"] = first.name
        }
        let server = LightstreamerServer(options: options, adapterSets: sets, logger: logger)
        try await server.start()
        let scheme = options.tlsCertificateChainFile == nil ? "http" : "https"
        let ready = "lightstreamer-server ready on \(scheme)://\(options.host):\(server.port ?? options.port)\n"
        FileHandle.standardOutput.write(Data(ready.utf8))
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: server)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
