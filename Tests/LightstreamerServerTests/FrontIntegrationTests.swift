import NIOPosix
import TLCP
import Testing

@testable import LightstreamerServer

/// The server over real loopback sockets, spoken to byte by byte.
@Suite(.timeLimit(.minutes(1))) struct FrontIntegrationTests {
    /// A server on a free port (one thread; the fast DEMO set, also as DEFAULT, unless `adapterSets`
    /// are given) and a client event loop group, both shut down after `body`.
    static func withServer(
        adapterSets: [AdapterSet]? = nil, configure: (inout ServerOptions) -> Void = { _ in },
        _ body: (LightstreamerServer, MultiThreadedEventLoopGroup) async throws -> Void
    ) async throws {
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.threads = 1
        if adapterSets == nil { options.adapterSetAliases = ["DEFAULT": "DEMO"] }
        configure(&options)
        let sets = adapterSets ?? [DemoAdapters.makeDemoAdapterSet(options: .init(stockUpdatesPerSecond: 20, counterUpdatesPerSecond: 50))]
        let server = LightstreamerServer(options: options, adapterSets: sets)
        try await server.start()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await body(server, group)
        } catch {
            await server.shutdown()
            try? await group.shutdownGracefully()
            throw error
        }
        await server.shutdown()
        try? await group.shutdownGracefully()
    }

    @Test func webSocketCreateSubscribeAndDestroy() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let ws = try await RawTestConnection.webSocket(port: port, group: group)
            #expect(await ws.waitFor("Sec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com"))
            #expect(ws.text.hasPrefix("HTTP/1.1 101"))
            try await ws.wsText("wsok")
            try await ws.wsText("create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false")
            // A control right after the create, without LS_session, waits for CONOK.
            try await ws.wsText(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=counter&LS_schema=count&LS_snapshot=true")
            #expect(await ws.waitFor("U,1,1,", seconds: 20), "received: \(ws.text)")
            let text = ws.text
            let order = ["WSOK", "CONOK,", "REQOK,1", "SUBOK,1,1,1", "CONF,1,", "U,1,1,"].map { text.range(of: $0)?.lowerBound }
            #expect(order.allSatisfy { $0 != nil })
            let positions = order.compactMap { $0 }
            #expect(positions == positions.sorted())
            // A second stream on the same WS is refused.
            try await ws.wsText("create_session\r\nLS_cid=x")
            #expect(await ws.waitFor("CONERR,69,"))
            // A malformed request gets ERROR and leaves the session alone.
            try await ws.wsText("bogus\r\nx=y")
            #expect(await ws.waitFor("ERROR,67,"))
            try await ws.wsText("control\r\nLS_reqId=2&LS_op=destroy&LS_close_socket=true&LS_cause_code=-3&LS_cause_message=bye")
            #expect(await ws.waitFor("END,-3,bye"))
            #expect(server.sessionCount == 0)
            await ws.close()
        }
    }

    @Test func httpPollingCreateStreamingBindAndControls() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let create = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0",
                body: "LS_polling=true&LS_polling_millis=0&LS_idle_millis=0&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg",
                contentType: "application/x-www-form-urlencoded")
            #expect(await create.waitFor("LOOP,0", seconds: 20), "received: \(create.text)")
            let conok = try #require(create.text.split(separator: "\r\n").first { $0.hasPrefix("CONOK,") })
            let sid = String(conok.split(separator: ",")[1])
            let stream = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0",
                body: "LS_session=\(sid)&LS_content_length=50000000&LS_send_sync=false")
            #expect(await stream.waitFor("CONOK,\(sid)", seconds: 20))
            #expect(stream.text.lowercased().contains("transfer-encoding: chunked"))
            let control = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0&LS_session=\(sid)",
                body: "LS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=counter&LS_schema=count&LS_snapshot=true\r\n"
                    + "LS_reqId=2&LS_op=delete&LS_subId=99\r\nLS_op=add")
            #expect(await control.waitFor("REQERR,2,19,", seconds: 20))
            #expect(await control.waitFor("REQOK,1"))
            #expect(await control.waitFor("ERROR,67,"))
            #expect(await stream.waitFor("U,1,1,", seconds: 20), "received: \(stream.text)")
            let heartbeat = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/heartbeat.txt?LS_protocol=TLCP-2.5.0&LS_session=\(sid)", body: "\r\n")
            #expect(await heartbeat.waitFor("\r\nREQOK\r\n"))
            let unknown = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0", body: "LS_session=nope")
            #expect(await unknown.waitFor("CONERR,20,"))
            for c in [create, stream, control, heartbeat, unknown] { await c.close() }
        }
    }

    @Test func refusedLoginAnswersTheAdapterCode() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let c = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0",
                body: "LS_polling=true&LS_cid=x&LS_user=refused&LS_password=p")
            #expect(await c.waitFor("CONERR,-2,"))
            let badSet = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0",
                body: "LS_polling=true&LS_cid=x&LS_adapter_set=NOPE")
            #expect(await badSet.waitFor("CONERR,2,"))
            let badVersion = try await RawTestConnection.post(
                port: port, group: group, path: "/lightstreamer/create_session.txt?LS_protocol=TLCP-9.0.0", body: "LS_cid=x")
            #expect(await badVersion.waitFor("CONERR,"))
            #expect(server.sessionCount == 0)
        }
    }

    @Test func metricsArePrometheusText() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let c = try await RawTestConnection.connect(port: port, group: group)
            try await c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await c.waitFor("lightstreamer_sessions_active 0"))
            #expect(c.text.contains("# TYPE lightstreamer_updates_sent_total counter"))
            #expect(c.text.contains("lightstreamer_bytes_per_second"))
        }
    }

    @Test func webSocketWithoutKnownSubprotocolIsRefused() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let ws = try await RawTestConnection.webSocket(port: port, group: group, subprotocol: "chat")
            // Refused with an HTTP error, never 101.
            #expect(await ws.waitFor("HTTP/1.1 400"))
            #expect(!ws.text.contains(" 101 "))
            let ok = try await RawTestConnection.webSocket(port: port, group: group)
            #expect(await ok.waitFor(" 101 "))
        }
    }
}
