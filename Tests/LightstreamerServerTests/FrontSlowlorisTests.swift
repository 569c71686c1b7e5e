import NIOCore
import NIOPosix
import Testing

@testable import LightstreamerServer

/// 500 connections that send their request head a byte at a time neither exhaust the server
/// nor delay a normal client, and are all closed by the server at the head timeout.
@Suite(.timeLimit(.minutes(2))) struct FrontSlowlorisTests {
    static let attackers = 500
    static let headTimeoutMillis = 30_000

    @Test func fiveHundredSlowHeadsDoNotStopANormalClientAndAreClosedAtTheHeadTimeout() async throws {
        // Two descriptors per connection in this process (client and server ends), plus slack.
        try OpenFilesLimit.raise(atLeast: 2 * Self.attackers + 256)
        try await FrontIntegrationTests.withServer(configure: { o in
            // Long enough that opening 500 connections on a loaded two-core machine (CI runs
            // other suites beside this one) ends well before the first of them times out, so
            // the normal client below is served while all of them are still held.
            o.front.requestHeadTimeoutMillis = Self.headTimeoutMillis
        }) { server, group in
            let port = try #require(server.port)
            // Opened 50 at a time, each with the start of a request line.
            var slow: [RawTestConnection] = []
            for _ in 0..<(Self.attackers / 50) {
                try await withThrowingTaskGroup(of: RawTestConnection.self) { tasks in
                    for _ in 0..<50 {
                        tasks.addTask {
                            let c = try await RawTestConnection.connect(port: port, group: group)
                            // On a loaded machine the server may already have timed one out.
                            try? await c.send("GET /lightstreamer HTTP/1.1\r\n")
                            return c
                        }
                    }
                    for try await c in tasks { slow.append(c) }
                }
            }
            // Drip one byte a connection every 100 ms for as long as the server keeps them.
            let connections = slow
            let drip = Task {
                while !Task.isCancelled {
                    for c in connections where !c.isClosed {
                        c.channel.writeAndFlush(ByteBuffer(bytes: [UInt8(ascii: "x")]), promise: nil)
                    }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { drip.cancel() }

            // A normal client, meanwhile: a WS session with data.
            let ws = try await RawTestConnection.webSocket(port: port, group: group)
            try await ws.wsText("create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false")
            try await ws.wsText(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=counter&LS_schema=count&LS_snapshot=true")
            #expect(await ws.waitFor("U,1,1,", seconds: 25), "received: \(ws.text)")
            let stillOpen = connections.filter { !$0.isClosed }.count
            #expect(stillOpen > 0, "the normal client was served only after the slow connections were gone")

            // Every slow connection is closed by the server (the head timer runs from the first
            // byte and is not pushed back by later ones), while the session goes on.
            let deadline = ContinuousClock.now + .milliseconds(Self.headTimeoutMillis) + .seconds(30)
            while ContinuousClock.now < deadline, connections.contains(where: { !$0.isClosed }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(connections.filter { !$0.isClosed }.count == 0)
            #expect(!ws.isClosed)
            ws.forget()
            #expect(await ws.waitFor("U,1,1,", seconds: 10))
            await ws.close()
        }
    }
}
