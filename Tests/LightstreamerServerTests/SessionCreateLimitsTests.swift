import NIOPosix
import Testing

@testable import LightstreamerServer

/// Create refusals the server decides itself: `LS_ttl_millis` (CONERR 5) and the configured
/// session limit (CONERR 8), over real sockets.
@Suite(.timeLimit(.minutes(1))) struct SessionCreateLimitsTests {
    /// Takes `delayMillis` to authenticate (suspending, not blocking).
    final class SlowMetadata: MetadataAdapter {
        let delayMillis: Int
        let literal = LiteralBasedMetadataAdapter()
        init(delayMillis: Int) { self.delayMillis = delayMillis }
        func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws {
            try await Task.sleep(for: .milliseconds(delayMillis))
        }
        func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
            try await literal.items(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter)
        }
        func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
            try await literal.fields(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter, schema: schema)
        }
    }

    static func withServer(
        delayMillis: Int, maxSessions: Int? = nil,
        _ body: (LightstreamerServer, MultiThreadedEventLoopGroup) async throws -> Void
    ) async throws {
        let set = AdapterSet(
            name: "DEFAULT", metadata: SlowMetadata(delayMillis: delayMillis),
            dataAdapters: ["DEFAULT": SimulatedDataAdapter(items: [:])])
        try await FrontIntegrationTests.withServer(adapterSets: [set], configure: { $0.sessions.maxSessions = maxSessions }, body)
    }

    static let create = "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0"

    @Test func aCreateSlowerThanItsTTLGetsConerr5() async throws {
        try await Self.withServer(delayMillis: 300) { server, group in
            let port = try #require(server.port)
            let late = try await RawTestConnection.post(
                port: port, group: group, path: Self.create,
                body: "LS_polling=true&LS_cid=x&LS_ttl_millis=50")
            #expect(await late.waitFor("CONERR,5,"))
            #expect(server.sessionCount == 0)
            let patient = try await RawTestConnection.post(
                port: port, group: group, path: Self.create,
                body: "LS_polling=true&LS_cid=x&LS_ttl_millis=unlimited")
            #expect(await patient.waitFor("CONOK,"))
            let inTime = try await RawTestConnection.post(
                port: port, group: group, path: Self.create,
                body: "LS_polling=true&LS_cid=x&LS_ttl_millis=20000")
            #expect(await inTime.waitFor("CONOK,"))
        }
    }

    @Test func theSessionLimitGivesConerr8() async throws {
        try await Self.withServer(delayMillis: 0, maxSessions: 1) { server, group in
            let port = try #require(server.port)
            let first = try await RawTestConnection.post(
                port: port, group: group, path: Self.create,
                body: "LS_polling=true&LS_cid=x&LS_polling_millis=0&LS_idle_millis=0")
            #expect(await first.waitFor("CONOK,"))
            let second = try await RawTestConnection.post(
                port: port, group: group, path: Self.create,
                body: "LS_polling=true&LS_cid=x")
            #expect(await second.waitFor("CONERR,8,"))
            #expect(server.sessionCount == 1)
        }
    }
}
