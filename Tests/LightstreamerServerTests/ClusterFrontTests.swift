import NIOPosix
import TLCP
import Testing

@testable import LightstreamerServer

/// A cluster node over real loopback sockets: its control link in CONOK, its name in SERVNAME
/// and on /metrics, the health endpoints, and draining (creates refused, sessions kept, then
/// told to move).
@Suite(.timeLimit(.minutes(1))) struct ClusterFrontTests {
    static func withNode(drainMillis: Int = 0, _ body: (LightstreamerServer, MultiThreadedEventLoopGroup) async throws -> Void) async throws
    {
        try await FrontIntegrationTests.withServer(
            configure: {
                $0.sessions.nodeName = "node-a"
                $0.sessions.controlLink = "127.0.0.1:9/node-a"
                $0.drainMillis = drainMillis
            }, body)
    }

    static func get(_ path: String, port: Int, group: MultiThreadedEventLoopGroup) async throws -> String {
        let c = try await RawTestConnection.connect(port: port, group: group)
        defer { Task { await c.close() } }
        try await c.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        _ = await c.waitClosed(seconds: 5)
        return c.text
    }

    static func webSocketSession(
        port: Int, group: MultiThreadedEventLoopGroup, cid: String = "cluster-test"
    ) async throws -> RawTestConnection {
        let ws = try await RawTestConnection.webSocket(port: port, group: group)
        #expect(await ws.waitFor("HTTP/1.1 101"))
        try await ws.wsText("wsok")
        try await ws.wsText("create_session\r\nLS_adapter_set=DEMO&LS_cid=\(cid)&LS_send_sync=false")
        return ws
    }

    @Test func conokCarriesTheControlLinkAndServnameTheNode() async throws {
        try await Self.withNode { server, group in
            let port = try #require(server.port)
            let ws = try await Self.webSocketSession(port: port, group: group)
            #expect(await ws.waitFor("SERVNAME,"), "\(ws.text)")
            #expect(ws.text.contains(",127.0.0.1:9/node-a\r\n"), "\(ws.text)")
            #expect(ws.text.contains("SERVNAME,Lightstreamer Swift Server (node-a)\r\n"), "\(ws.text)")
            // HTTP too.
            let http = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0",
                body: "LS_adapter_set=DEMO&LS_cid=x&LS_polling=true&LS_polling_millis=0&LS_idle_millis=0")
            #expect(await http.waitFor("LOOP,"), "\(http.text)")
            #expect(http.text.contains(",127.0.0.1:9/node-a\r\n"), "\(http.text)")
            await http.close()
            await ws.close()
        }
    }

    @Test func metricsNameTheNode() async throws {
        try await Self.withNode { server, group in
            let text = try await Self.get("/metrics", port: try #require(server.port), group: group)
            #expect(text.contains("\nlightstreamer_node_info{node=\"node-a\"} 1\n"), "\(text)")
            #expect(text.contains("\nlightstreamer_ready 1\n"), "\(text)")
            #expect(text.contains("\nlightstreamer_draining 0\n"), "\(text)")
        }
    }

    @Test func healthEndpoints() async throws {
        try await Self.withNode { server, group in
            let port = try #require(server.port)
            let live = try await Self.get("/health/live", port: port, group: group)
            #expect(live.hasPrefix("HTTP/1.1 200"), "\(live)")
            #expect(live.contains(#"{"status":"live","node":"node-a"}"#), "\(live)")
            let ready = try await Self.get("/health/ready", port: port, group: group)
            #expect(ready.hasPrefix("HTTP/1.1 200"), "\(ready)")
            #expect(ready.contains("application/json"), "\(ready)")
            server.health.setCondition("mpnStore", failure: "store unreachable")
            let notReady = try await Self.get("/health/ready", port: port, group: group)
            #expect(notReady.hasPrefix("HTTP/1.1 503"), "\(notReady)")
            #expect(notReady.contains(#""reasons":["mpnStore: store unreachable"]"#), "\(notReady)")
            server.health.setCondition("mpnStore", failure: nil)
            #expect(try await Self.get("/health/ready", port: port, group: group).hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func healthOnTheAdminListener() async throws {
        try await FrontIntegrationTests.withServer(configure: {
            $0.front.adminListener = ("127.0.0.1", 0)
            $0.sessions.nodeName = "node-c"
        }) { server, group in
            let admin = try #require(server.adminPort)
            let ready = try await Self.get("/health/ready", port: admin, group: group)
            #expect(ready.hasPrefix("HTTP/1.1 200") && ready.contains(#""node":"node-c""#), "\(ready)")
            // Still on the main listener, for balancers that probe the traffic port.
            let main = try await Self.get("/health/live", port: try #require(server.port), group: group)
            #expect(main.hasPrefix("HTTP/1.1 200"), "\(main)")
        }
    }

    @Test func drainingRefusesCreatesKeepsSessionsThenEndsThemWith48() async throws {
        try await Self.withNode(drainMillis: 60_000) { server, group in
            let port = try #require(server.port)
            let ws = try await Self.webSocketSession(port: port, group: group)
            try await ws.wsText(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=counter&LS_schema=count&LS_snapshot=true")
            #expect(await ws.waitFor("U,1,1,", seconds: 20), "\(ws.text)")
            // Long enough for the checks below on a loaded machine (the session must still be
            // there when they are done), short enough to see its end.
            let drain = Task { await server.drain(millis: 6_000) }
            try await waitFor { server.health.isDraining }
            // The existing session goes on receiving.
            ws.forget()
            #expect(await ws.waitFor("U,1,1,", seconds: 5), "\(ws.text)")
            // Not ready, and said so on /metrics.
            let ready = try await Self.get("/health/ready", port: port, group: group)
            #expect(ready.hasPrefix("HTTP/1.1 503") && ready.contains("draining"), "\(ready)")
            #expect(try await Self.get("/metrics", port: port, group: group).contains("\nlightstreamer_draining 1\n"))
            // Live all the same.
            #expect(try await Self.get("/health/live", port: port, group: group).hasPrefix("HTTP/1.1 200"))
            // New sessions are refused with 5 (2.2+), on WS and HTTP.
            let refused = try await Self.webSocketSession(port: port, group: group, cid: "late")
            #expect(await refused.waitFor("CONERR,5,"), "\(refused.text)")
            let http = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0",
                body: "LS_adapter_set=DEMO&LS_cid=x&LS_polling=true&LS_polling_millis=0&LS_idle_millis=0")
            #expect(await http.waitFor("CONERR,5,"), "\(http.text)")
            let old = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.1.0",
                body: "LS_adapter_set=DEMO&LS_cid=x&LS_polling=true&LS_polling_millis=0&LS_idle_millis=0")
            #expect(await old.waitFor("CONERR,10,"), "\(old.text)")
            // At the end of the drain it is told to move: END 48.
            #expect(await ws.waitFor("END,48,", seconds: 20), "\(ws.text)")
            await drain.value
            #expect(server.sessionCount == 0)
            for c in [refused, http, old, ws] { await c.close() }
        }
    }

    @Test func drainEndsAsSoonAsTheLastSessionLeaves() async throws {
        try await Self.withNode { server, group in
            let port = try #require(server.port)
            let ws = try await Self.webSocketSession(port: port, group: group)
            #expect(await ws.waitFor("CONOK,"), "\(ws.text)")
            let started = ContinuousClock.now
            let drain = Task { await server.drain(millis: 30_000) }
            try await waitFor { server.health.isDraining }
            try await ws.wsText("control\r\nLS_reqId=9&LS_op=destroy")
            #expect(await ws.waitFor("END,31,"), "\(ws.text)")
            await drain.value
            // Well before the drain's 30 s, with room for a test process that stalls for
            // seconds on a loaded machine (15 s in CI runs).
            #expect(ContinuousClock.now - started < .seconds(25))
            #expect(!ws.text.contains("END,48"))
            await ws.close()
        }
    }

    private func waitFor(seconds: Double = 5, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ClusterTestTimeout() }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

struct ClusterTestTimeout: Error {}
