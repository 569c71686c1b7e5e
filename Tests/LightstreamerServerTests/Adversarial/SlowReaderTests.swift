import NIOCore
import NIOPosix
import Testing

@testable import LightstreamerServer

/// A reader that never reads while its item updates fast (8 KB values, 1,000 a second) is
/// bounded in bytes, not only in time: its connection is closed once the unsent bytes pass
/// `maxBacklogBytes` (long before `maxUndrainedMillis`). Its session, left unbound, then holds
/// what its mode owes: with RAW every update, so it is closed once that passes the same
/// bound; with MERGE only the item's latest row, so it lives on, waiting for a recovery.
@Suite(.timeLimit(.minutes(1))) struct SlowReaderTests {
    @Test(arguments: ["RAW", "MERGE"]) func aReaderThatNeverReadsIsBoundedInBytes(mode: String) async throws {
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.threads = 1
        options.sessions.maxUndrainedMillis = 120_000
        options.sessions.maxBacklogBytes = 2 << 20
        options.sessions.sessionRecoveryMillis = 120_000
        let set = AdapterSet(name: "FLOOD", dataAdapters: ["DEFAULT": FrontBackpressureTests.FloodAdapter()])
        let server = LightstreamerServer(options: options, adapterSets: [set])
        try await server.start()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let port = try #require(server.port)
        let channel = try await FrontBackpressureTests.muteWebSocket(
            port: port, group: group, adapterSet: "FLOOD",
            control: "LS_reqId=1&LS_op=add&LS_subId=1&LS_mode=\(mode)&LS_group=flood&LS_schema=v&LS_ack=false")

        let deadline = ContinuousClock.now + .seconds(40)
        while ContinuousClock.now < deadline {
            let m = server.metrics.snapshot
            if m.slowClientsClosed >= 1, m.sessionsClosedForBacklog >= 1 || mode == "MERGE" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        if mode == "MERGE" {
            // 8 MB a second of updates: unfolded, they would pass maxBacklogBytes within a second.
            try await Task.sleep(for: .seconds(3))
        }
        let m = server.metrics.snapshot
        #expect(m.slowClientsClosed == 1, "the connection was not closed for its backlog")
        #expect(m.connectionsOpen == 0)
        if mode == "MERGE" {
            #expect(m.sessionsClosedForBacklog == 0, "the unbound MERGE session did not fold its updates")
            #expect(m.updatesConflated > 1_000, "folded updates are not counted as conflated")
            #expect(server.sessionCount == 1)
        } else {
            #expect(m.sessionsClosedForBacklog == 1, "the session was not closed for its backlog")
            #expect(server.sessionCount == 0)
        }
        try? await channel.close()
        await server.shutdown()
        try? await group.shutdownGracefully()
    }
}
