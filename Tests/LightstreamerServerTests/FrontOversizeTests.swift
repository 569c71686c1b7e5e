import NIOCore
import NIOPosix
import Testing

@testable import LightstreamerServer

/// Oversize inputs over real sockets: each is refused or the connection closed, without the
/// server holding or parsing it whole, and the server goes on serving.
@Suite(.timeLimit(.minutes(1))) struct FrontOversizeTests {
    static func withServer(_ body: (Int, MultiThreadedEventLoopGroup) async throws -> Void) async throws {
        try await FrontIntegrationTests.withServer(configure: { o in
            o.front.maxRequestHeadBytes = 16 * 1024
            o.sessions.requestLimit = 32 * 1024
        }) { server, group in
            let port = try #require(server.port)
            try await body(port, group)
            // Still serving.
            let c = try await RawTestConnection.connect(port: port, group: group)
            try await c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await c.waitFor("Lightstreamer Swift Server"))
        }
    }

    @Test func aHeadOverTheLimitClosesTheConnection() async throws {
        try await Self.withServer { port, group in
            let c = try await RawTestConnection.connect(port: port, group: group)
            try? await c.send("GET / HTTP/1.1\r\nHost: x\r\n")
            for i in 0..<40 where !c.isClosed {
                try? await c.send("X-Filler-\(i): " + String(repeating: "a", count: 1_000) + "\r\n")
            }
            #expect(await c.waitClosed())
            #expect(!c.text.contains("200 OK"))
        }
    }

    @Test func aRequestLineOfMegabytesClosesTheConnection() async throws {
        try await Self.withServer { port, group in
            let c = try await RawTestConnection.connect(port: port, group: group)
            try? await c.send("GET /" + String(repeating: "a", count: 100_000))
            var sent = 100_000
            while sent < 4_000_000, !c.isClosed {
                try? await c.send(String(repeating: "a", count: 100_000))
                sent += 100_000
            }
            #expect(await c.waitClosed())
            #expect(sent < 4_000_000, "the server read megabytes of request line")
            // Closed by `maxRequestHeadBytes` (16 KiB here), before NIO's own 80 KiB limit, which
            // would answer 400 first.
            #expect(!c.text.contains("400"))
        }
    }

    @Test func aBodyOverTheLimitIs413() async throws {
        try await Self.withServer { port, group in
            let body = "LS_op=" + String(repeating: "a", count: 40_000)
            let c = try await RawTestConnection.post(port: port, group: group, path: "/lightstreamer/control.txt", body: body)
            #expect(await c.waitFor("HTTP/1.1 413"))
            #expect(await c.waitClosed())
        }
    }

    /// Just under the limits: a body that takes many reads, each in a buffer twice as large as
    /// the one before (`FrontReadBuffers`), is read whole and answered; the same connection then
    /// serves a short request, read into the small buffer it keeps.
    @Test func aBodyJustUnderTheLimitIsReadWholeAndTheConnectionServesOn() async throws {
        try await Self.withServer { port, group in
            let body = "LS_op=" + String(repeating: "a", count: 30_000)
            let c = try await RawTestConnection.post(port: port, group: group, path: "/lightstreamer/control.txt", body: body)
            #expect(await c.waitFor("HTTP/1.1 200"))
            #expect(!c.text.contains("413"))
            try await c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await c.waitFor("Lightstreamer Swift Server"))
            #expect(!c.isClosed)
        }
    }

    @Test func aWebSocketMessageOverTheLimitIsClosedWith1009() async throws {
        try await FrontIntegrationTests.withServer(configure: { $0.sessions.requestLimit = 8_192 }) { server, group in
            let ws = try await RawTestConnection.webSocket(port: try #require(server.port), group: group)
            #expect(await ws.waitFor(" 101 "))
            // Fragments, each under the limit, adding up to more.
            let part = String(repeating: "a", count: 5_000)
            try? await ws.send(
                RawWebSocketFrames.text(part, fin: false)
                    + RawWebSocketFrames.frame(opcode: 0, payload: Array(part.utf8)))
            #expect(await ws.waitClosed())
            #expect(RawWebSocketFrames.closeCode(in: ws.bytes) == 1009)
        }
    }
}
