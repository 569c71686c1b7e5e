import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import LightstreamerServer

/// WS-POLLING under load: a client that rebinds on the same WebSocket the moment `LOOP`
/// arrives must never find the previous poll still open (`CONERR,69`). The session lives on
/// one event loop and polls on a connection of the other, with an item updating 1,000 times a
/// second, so the poll's last line and its end are written from another thread than the
/// socket's.
@Suite(.timeLimit(.minutes(2))) struct WebSocketPollingRebindTests {
    /// Reads WS frames as text and, in the same read, answers every `LOOP` with a bind.
    final class Rebinder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        struct State {
            var text = ""
            var polls = 0
            var refusals: [String] = []
        }
        let state = NIOLockedValueBox(State())
        let session: String
        let maxPolls: Int

        init(session: String, maxPolls: Int) {
            self.session = session
            self.maxPolls = maxPolls
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            let rebind = state.withLockedValue { s -> Bool in
                s.text += String(decoding: bytes.readableBytesView, as: UTF8.self)
                if let r = s.text.range(of: "CONERR,") {
                    s.refusals.append(String(s.text[r.lowerBound...].prefix(80)))
                    s.text = ""
                    return false
                }
                guard s.text.contains("LOOP,") else { return false }
                s.text = ""
                s.polls += 1
                return s.polls < maxPolls
            }
            if rebind {
                let bind = "bind_session\r\nLS_session=\(session)&LS_polling=true&LS_polling_millis=0&LS_idle_millis=2000"
                context.writeAndFlush(wrapOutboundOut(FrontBackpressureTests.frame(bind)), promise: nil)
            }
        }
    }

    @Test func rebindingAtLOOPNeverMeetsAnOpenPoll() async throws {
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.threads = 2
        let set = DemoAdapters.makeDemoAdapterSet(options: .init(stockUpdatesPerSecond: 1, counterUpdatesPerSecond: 1_000))
        let server = LightstreamerServer(options: options, adapterSets: [set])
        try await server.start()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { Task { try? await group.shutdownGracefully() } }
        let port = try #require(server.port)

        // The session: created and subscribed on a first WebSocket, which then closes.
        let first = try await RawTestConnection.webSocket(port: port, group: group)
        try await first.wsText("create_session\r\nLS_adapter_set=DEMO&LS_cid=x&LS_send_sync=false")
        try await first.wsText(
            "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=counter&LS_schema=count&LS_snapshot=false")
        #expect(await first.waitFor("U,1,1,", seconds: 10))
        let sid = try #require(first.text.split(separator: "CONOK,").last?.split(separator: ",").first.map(String.init))
        await first.close()

        // Polls on a second connection: the server's two loops take connections in turn, so
        // this one is on the other loop than the session's.
        let rebinder = Rebinder(session: sid, maxPolls: 1_000)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { ch in ch.eventLoop.makeCompletedFuture { try ch.pipeline.syncOperations.addHandler(rebinder) } }
            .connect(host: "127.0.0.1", port: port).get()
        let upgrade =
            "GET /lightstreamer HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com\r\n\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: upgrade)).get()
        try await channel.writeAndFlush(
            FrontBackpressureTests.frame(
                "bind_session\r\nLS_session=\(sid)&LS_polling=true&LS_polling_millis=0&LS_idle_millis=2000")
        ).get()
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let s = rebinder.state.withLockedValue { $0 }
            if s.polls >= 1_000 || !s.refusals.isEmpty { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let s = rebinder.state.withLockedValue { $0 }
        #expect(s.refusals.isEmpty, "after \(s.polls) polls: \(s.refusals)")
        #expect(s.polls >= 1_000, "only \(s.polls) polls")
        try? await channel.close()
        await server.shutdown()
    }
}
