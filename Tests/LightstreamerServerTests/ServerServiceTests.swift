import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Testing

@_spi(Testing) @testable import LightstreamerServer

/// The server in a `ServiceGroup` (graceful shutdown drains and stops it) and the event loop
/// group it runs on: one given to it, the shared singleton, or one of its own.
@Suite("The server as a service, and its event loop group")
struct ServerServiceTests {
    static func makeServer(_ options: ServerOptions = ServerOptions(host: "127.0.0.1", port: 0)) -> LightstreamerServer {
        LightstreamerServer(options: options, adapterSets: [DemoAdapters.makeDemoAdapterSet()])
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

    @Test func gracefulShutdownOfTheGroupDrainsAndStopsTheServer() async throws {
        let server = Self.makeServer()
        try await server.start()
        let port = try #require(server.port)
        #expect(await Self.accepts(port: port))
        let listener = try #require(server.listeningChannel)
        let group = ServiceGroup(services: [server], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(server.health.isDraining)
        #expect(server.port == nil)
        #expect(server.sessionCount == 0)
        // The socket itself, not the port: a server of a test running meanwhile may have taken it.
        #expect(!listener.isActive)
    }

    @Test func cancellingTheGroupStopsTheServerToo() async throws {
        let server = Self.makeServer()
        let group = ServiceGroup(services: [server], logger: Logger(label: "test"))
        let run = Task { try await group.run() }
        run.cancel()
        _ = await run.result
        #expect(server.port == nil)
    }

    @Test func aGivenGroupIsUsedAndLeftRunning() async throws {
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.eventLoopGroup = loops
        options.threads = 3 // ignored: the group is given
        let server = Self.makeServer(options)
        try await server.start()
        let loop = try #require(server.listeningEventLoop)
        #expect(loop === loops.next())
        await server.shutdown()
        #expect(try await loops.next().submit { 42 }.get() == 42)
        try await loops.shutdownGracefully()
    }

    @Test func byDefaultTheSharedSingletonIsUsedAndLeftRunning() async throws {
        let server = Self.makeServer()
        try await server.start()
        let loop = try #require(server.listeningEventLoop)
        #expect(MultiThreadedEventLoopGroup.singleton.makeIterator().contains { $0 === loop })
        await server.shutdown()
        #expect(try await loop.submit { 7 }.get() == 7)
    }

    @Test func threadsMakesAGroupOfTheServersOwn() async throws {
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.threads = 1
        let server = Self.makeServer(options)
        try await server.start()
        let loop = try #require(server.listeningEventLoop)
        #expect(!MultiThreadedEventLoopGroup.singleton.makeIterator().contains { $0 === loop })
        await server.shutdown()
    }
}
