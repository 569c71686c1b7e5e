import Foundation
import LightstreamerServer
import Testing

@testable import MPNModule

/// A node with the MPN Module is ready for a balancer only while its store answers the module's
/// heartbeat (the `mpnStore` condition of `/health/ready`).
@Suite struct MPNReadinessTests {
    @Test func readinessFollowsTheStoreHeartbeat() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mpn-ready-\(UUID().uuidString).sqlite").path
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        let server = try await LightstreamerMPNServer.make(
            options: ServerOptions(host: "127.0.0.1", port: 0),
            adapterSets: [DemoAdapters.makeDemoAdapterSet()],
            mpn: MPNConfiguration.demoDefault(sqlitePath: path))
        #expect(server.server.health.readiness.reasons == ["starting"])
        try await server.start()
        await server.module.checkModules()
        #expect(server.server.health.readiness.ready)
        // The store goes away: the next heartbeat fails and the node is not ready.
        await server.module.store.close()
        await server.module.checkModules()
        let r = server.server.health.readiness
        #expect(!r.ready)
        #expect(r.reasons.count == 1 && r.reasons[0].hasPrefix("mpnStore: store unreachable"), "\(r.reasons)")
        await server.shutdown()
    }
}
