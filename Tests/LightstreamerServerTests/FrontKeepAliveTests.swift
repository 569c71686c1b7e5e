import NIOPosix
import Testing

@testable import LightstreamerServer

/// HTTP/1.1 persistent connections and WebSocket refusals, over real loopback sockets.
@Suite(.timeLimit(.minutes(1))) struct FrontKeepAliveTests {
    static func post(_ path: String, _ body: String, close: Bool = false) -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
            + (close ? "Connection: close\r\n" : "")
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static func occurrences(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func twoRequestsOnOneConnection() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let port = try #require(server.port)
            let c = try await RawTestConnection.connect(port: port, group: group)
            try await c.send(Self.post("/lightstreamer/heartbeat.txt?LS_protocol=TLCP-2.5.0", "LS_reqId=1"))
            #expect(await c.waitFor("REQOK"))
            #expect(c.text.contains("Connection: keep-alive"))
            try await c.send(
                Self.post(
                    "/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0",
                    "LS_reqId=7&LS_op=add&LS_session=nope&LS_subId=1&LS_mode=MERGE&LS_group=a&LS_schema=b"))
            #expect(await c.waitFor("REQERR,7,20"))
            #expect(Self.occurrences("HTTP/1.1 200", in: c.text) == 2)
            #expect(!c.isClosed)
            await c.close()
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let port = try #require(server.port)
            let c = try await RawTestConnection.connect(port: port, group: group)
            let control = "/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0"
            try await c.send(
                Self.post(control, "LS_reqId=a1&LS_op=destroy&LS_session=x1")
                    + Self.post(control, "LS_reqId=a2&LS_op=destroy&LS_session=x2")
                    + "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await c.waitFor("lightstreamer_sessions_active"))
            let text = c.text
            let first = try #require(text.range(of: "REQERR,a1,"))
            let second = try #require(text.range(of: "REQERR,a2,"))
            let third = try #require(text.range(of: "lightstreamer_sessions_active"))
            #expect(first.lowerBound < second.lowerBound && second.lowerBound < third.lowerBound)
            #expect(!c.isClosed)
            await c.close()
        }
    }

    @Test func connectionCloseIsHonored() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let port = try #require(server.port)
            let c = try await RawTestConnection.connect(port: port, group: group)
            try await c.send(Self.post("/lightstreamer/heartbeat.txt?LS_protocol=TLCP-2.5.0", "LS_reqId=1", close: true))
            #expect(await c.waitFor("REQOK"))
            #expect(c.text.contains("Connection: close"))
            let deadline = ContinuousClock.now + .seconds(5)
            while !c.isClosed, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(c.isClosed)
        }
    }

    @Test func webSocketUpgradeAfterAnEarlierRequest() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let port = try #require(server.port)
            let c = try await RawTestConnection.connect(port: port, group: group)
            try await c.send(Self.post("/lightstreamer/heartbeat.txt?LS_protocol=TLCP-2.5.0", "LS_reqId=1"))
            #expect(await c.waitFor("REQOK"))
            try await c.send(
                "GET /lightstreamer HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com\r\n\r\n")
            #expect(await c.waitFor(" 101 "))
            try await c.wsText("wsok")
            #expect(await c.waitFor("WSOK"))
            await c.close()
        }
    }

    @Test func unsupportedSubprotocolGetsA400() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let port = try #require(server.port)
            let ws = try await RawTestConnection.webSocket(
                port: port, group: group,
                subprotocol: "TLCP-9.9.0.lightstreamer.com, TLCP-1.0.0.lightstreamer.com")
            #expect(await ws.waitFor("HTTP/1.1 400"))
            #expect(!ws.text.contains(" 101 "))
            #expect(ws.text.contains("Unsupported WebSocket subprotocol"))
        }
    }
}
