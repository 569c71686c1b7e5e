import Foundation
@_spi(Testing) import LightstreamerServer
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Testing

@testable import MPNModule

/// `LightstreamerMPNServer.services` in one `ServiceGroup`, as the executable runs them: a
/// graceful shutdown stops the server, then the module, then closes the store.
@Suite("The MPN server's services in one group")
struct MPNServicesTests {
    static func makeServer(
        path: String, options: ServerOptions = ServerOptions(host: "127.0.0.1", port: 0)
    )
        async throws -> LightstreamerMPNServer
    {
        let configuration = MPNConfiguration.demoDefault(sqlitePath: path)
        let provider = RecordingProvider()
        let registry = MPNProviderRegistry(configuration: configuration, providers: ["Apple/*": provider, "Google/*": provider])
        return try await LightstreamerMPNServer.make(
            options: options, adapterSets: [DemoAdapters.makeDemoAdapterSet()],
            mpn: configuration, providers: registry)
    }

    static func temporaryDatabase() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("mpn-services-\(UUID().uuidString).sqlite").path
    }

    static func remove(_ path: String) {
        for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
    }

    static func accepts(port: Int) async -> Bool {
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port).get()
            try? await channel.close()
            return true
        } catch {
            return false
        }
    }

    @Test func theServicesAreTheStoreTheModuleAndTheServerInThatOrder() async throws {
        let path = Self.temporaryDatabase()
        defer { Self.remove(path) }
        let server = try await Self.makeServer(path: path)
        let services = server.services
        #expect(services.count == 3)
        #expect(services.first is MPNStoreService)
        #expect((services.dropFirst().first as? MPNModule) === server.module)
        await server.store.close()
    }

    @Test func gracefulShutdownStopsTheServerTheModuleAndClosesTheStore() async throws {
        let path = Self.temporaryDatabase()
        defer { Self.remove(path) }
        let server = try await Self.makeServer(path: path)
        try await server.start()
        let port = try #require(server.port)
        #expect(await Self.accepts(port: port))
        #expect(await server.module.started)
        let listener = try #require(server.server.listeningChannel)
        let group = ServiceGroup(services: server.services, logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(server.port == nil)
        // The socket itself, not the port: a server of a test running meanwhile may have taken it.
        #expect(!listener.isActive)
        #expect(await !server.module.started)
        await #expect(throws: (any Error).self) { _ = try await server.store.allDevices() }
    }

    @Test func runAsOneServiceStartsEverythingAndStopsOnGracefulShutdown() async throws {
        let path = Self.temporaryDatabase()
        defer { Self.remove(path) }
        let server = try await Self.makeServer(path: path)
        let group = ServiceGroup(services: [server], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(server.port == nil)
        #expect(await !server.module.started)
        await #expect(throws: (any Error).self) { _ = try await server.store.allDevices() }
    }

    @Test func theStoreUsesTheGivenGroupAndLeavesItRunning() async throws {
        let path = Self.temporaryDatabase()
        defer { Self.remove(path) }
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.eventLoopGroup = loops
        #expect(options.sharedEventLoopGroup === loops)
        let server = try await Self.makeServer(path: path, options: options)
        try await server.start()
        await server.shutdown()
        await server.store.close()
        #expect(try await loops.next().submit { 1 }.get() == 1)
        try await loops.shutdownGracefully()
    }
}
