import NIOCore
import NIOPosix
import Testing

@testable import LightstreamerServer

/// The per-phase timeouts of the connection layer (`ConnectionPhases`): the state machine on
/// its own, then each phase over real loopback sockets with the timeouts set low.
@Suite(.timeLimit(.minutes(1))) struct FrontTimeoutTests {
    static let limits = ConnectionPhases.Limits(
        tlsHandshakeMillis: 1, requestHeadMillis: 2, requestBodyMillis: 3, idleMillis: 4,
        webSocketSessionMillis: 5, maxRequestHeadBytes: 100)

    @Test func phasesArmTheTimerOfEachPhaseAndNoneOnceRespondingOrBound() {
        var p = ConnectionPhases(limits: Self.limits, tls: true)
        #expect(p.start() == .arm(millis: 1, generation: 1))
        #expect(p.timerFired(generation: 1) == .close(.tlsHandshakeTimeout))
        #expect(p.handshakeCompleted() == .arm(millis: 2, generation: 2))
        // The first request's head timer runs from the connection's start: bytes do not re-arm it.
        #expect(p.bytesArriving() == .none)
        #expect(p.bytesConsumed(10) == .none)
        #expect(p.timerFired(generation: 1) == .none, "a stale timer is ignored")
        #expect(p.timerFired(generation: 2) == .close(.requestHeadTimeout))
        #expect(p.headReceived() == .arm(millis: 3, generation: 3))
        #expect(p.timerFired(generation: 3) == .close(.requestBodyTimeout))
        #expect(p.requestEnded() == .disarm)
        #expect(p.timerFired(generation: 3) == .none, "no timeout while a response (a stream) goes out")
        #expect(p.responseEnded() == .arm(millis: 4, generation: 4))
        #expect(p.timerFired(generation: 4) == .close(.idleTimeout))
        // A later request's head timer starts at its first byte.
        #expect(p.bytesArriving() == .arm(millis: 2, generation: 5))
        #expect(p.bytesConsumed(60) == .none)
        #expect(p.bytesConsumed(60) == .close(.requestHeadTooLarge))
        #expect(p.headReceived() == .arm(millis: 3, generation: 6))
        #expect(p.bytesConsumed(1_000) == .none, "body bytes do not count as head")
        #expect(p.requestEnded() == .disarm)
        #expect(p.timerFired(generation: 6) == .none, "no timeout while a response goes out")
    }

    @Test func plainConnectionsStartWaitingForTheirFirstRequestHead() {
        var p = ConnectionPhases(limits: Self.limits, tls: false)
        #expect(p.start() == .arm(millis: 2, generation: 1))
        #expect(p.handshakeCompleted() == .none)
        #expect(p.timerFired(generation: 1) == .close(.requestHeadTimeout))
    }

    /// The head timeout of a connection's first request runs from accept: below about 3 s, a
    /// loaded CI machine (the suites run in parallel on two cores) can let it expire between
    /// a test's connect and its first write ("I/O on closed channel" seen in CI).
    static func withLowTimeouts(
        idleMillis: Int = 600, webSocketMillis: Int = 600, headMillis: Int = 3_000,
        _ body: (LightstreamerServer, MultiThreadedEventLoopGroup) async throws -> Void
    ) async throws {
        try await FrontIntegrationTests.withServer(
            configure: { o in
                o.front.requestHeadTimeoutMillis = headMillis
                o.front.requestBodyTimeoutMillis = 600
                o.front.idleConnectionTimeoutMillis = idleMillis
                o.front.webSocketSessionTimeoutMillis = webSocketMillis
            }, body)
    }

    @Test func aConnectionThatSendsNothingIsClosed() async throws {
        try await Self.withLowTimeouts { server, group in
            let c = try await RawTestConnection.connect(port: try #require(server.port), group: group)
            #expect(await c.waitClosed(seconds: 10))
        }
    }

    @Test func aHeadSentAByteAtATimeIsClosedAtTheHeadTimeoutNotKeptAliveByEachByte() async throws {
        try await Self.withLowTimeouts { server, group in
            let c = try await RawTestConnection.connect(port: try #require(server.port), group: group)
            let head = Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 1_000)
            let start = ContinuousClock.now
            for byte in head where !c.isClosed {
                try? await c.send([byte])
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(c.isClosed)
            // Closed long before the 1,000 bytes (50 s) were out: the timer is not per byte.
            #expect(ContinuousClock.now - start < .seconds(20))
            #expect(!c.text.contains("HTTP/1.1 200"))
        }
    }

    @Test func aBodyThatNeverEndsIsClosed() async throws {
        // The head's time (from accept) long enough that a stalled test process still sends
        // its head within it; the body's time (600 ms) is what closes these connections.
        try await Self.withLowTimeouts(headMillis: 10_000) { server, group in
            let port = try #require(server.port)
            let withLength = try await RawTestConnection.connect(port: port, group: group)
            try await withLength.send("POST /lightstreamer/control.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nLS_op=")
            let chunked = try await RawTestConnection.connect(port: port, group: group)
            try await chunked.send("POST /lightstreamer/control.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nLS_\r\n")
            #expect(await withLength.waitClosed(seconds: 10))
            #expect(await chunked.waitClosed(seconds: 10))
        }
    }

    @Test func aKeepAliveConnectionIsClosedWhenIdleAfterItsResponse() async throws {
        // An idle time long enough that a loaded machine still sends the second request within
        // it (the test only waits 200 ms, but noticing the first answer can take longer: the
        // whole test process has stalled for 5-7 s while the suite starts in CI runs).
        try await Self.withLowTimeouts(idleMillis: 8_000) { server, group in
            let c = try await RawTestConnection.connect(port: try #require(server.port), group: group)
            try await c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await c.waitFor("Lightstreamer Swift Server"))
            // A second request on the same connection within the idle time is served.
            try await Task.sleep(for: .milliseconds(200))
            c.forget()
            try await c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await c.waitFor("Lightstreamer Swift Server"))
            #expect(await c.waitClosed(seconds: 20))
        }
    }

    @Test func aWebSocketWithoutASessionRequestIsClosed() async throws {
        // The test must send `wsok` within the WebSocket's time: 600 ms was not enough once in
        // a CI run, where the whole test process stalled for seconds while it started (the
        // server had closed the socket when `wsok` went out: "I/O on closed channel").
        try await Self.withLowTimeouts(webSocketMillis: 5_000) { server, group in
            let ws = try await RawTestConnection.webSocket(port: try #require(server.port), group: group)
            #expect(await ws.waitFor(" 101 "))
            try await ws.wsText("wsok")
            #expect(await ws.waitFor("WSOK"))
            // `wsok` is not a session request: the socket is still closed at the timeout.
            #expect(await ws.waitClosed(seconds: 20))
        }
    }

    @Test func aWebSocketCarryingASessionIsNotCut() async throws {
        // Long enough for a loaded machine to answer the create before the WebSocket's timer
        // runs out (600 ms was not, once, in a CI run: the session was made, the socket cut
        // first; the whole test process stalls for 5-7 s while the suite starts in CI runs).
        try await Self.withLowTimeouts(webSocketMillis: 8_000) { server, group in
            let ws = try await RawTestConnection.webSocket(port: try #require(server.port), group: group)
            #expect(await ws.waitFor(" 101 "))
            try await ws.wsText(
                "create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false&LS_keepalive_millis=1000")
            #expect(await ws.waitFor("CONOK,", seconds: 20))
            // Well past every timeout of the connection layer.
            try await Task.sleep(for: .milliseconds(9_000))
            #expect(!ws.isClosed)
            try await ws.wsText(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=counter&LS_schema=count&LS_snapshot=true")
            #expect(await ws.waitFor("U,1,1,", seconds: 20), "received: \(ws.text)")
            await ws.close()
        }
    }

    @Test func aWebSocketWhoseSessionEndedWaitsForTheNextUnderTheTimeout() async throws {
        // Long enough for a loaded machine to answer the create before the WebSocket's timer runs
        // out (the whole test process stalls for 5-7 s while the suite starts in CI runs).
        try await Self.withLowTimeouts(webSocketMillis: 8_000) { server, group in
            let ws = try await RawTestConnection.webSocket(port: try #require(server.port), group: group)
            try await ws.wsText(
                "create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false&LS_keepalive_millis=1000")
            #expect(await ws.waitFor("CONOK,", seconds: 20))
            try await Task.sleep(for: .milliseconds(1_000))
            #expect(!ws.isClosed)
            try await ws.wsText("control\r\nLS_reqId=1&LS_op=destroy&LS_close_socket=false")
            #expect(await ws.waitFor("END,"))
            #expect(await ws.waitClosed(seconds: 20), "received: \(ws.text.debugDescription)")
        }
    }

    @Test func anHTTPStreamIsNotCut() async throws {
        try await Self.withLowTimeouts { server, group in
            let stream = try await RawTestConnection.post(
                port: try #require(server.port), group: group, path: "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0",
                body: "LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_adapter_set=DEMO&LS_keepalive_millis=1000&LS_send_sync=false")
            #expect(await stream.waitFor("CONOK,", seconds: 20))
            try await Task.sleep(for: .milliseconds(3_500))
            #expect(!stream.isClosed)
            stream.forget()
            #expect(await stream.waitFor("PROBE", seconds: 10), "received: \(stream.text)")
            await stream.close()
        }
    }
}

@Suite struct WebSocketSessionObserverTests {
    static func view(_ s: String) -> ByteBufferView { ByteBuffer(string: s).readableBytesView }

    @Test func findsLinesInFramesOfSeveralLines() {
        let conok = Array("CONOK,".utf8)
        #expect(WebSocketSessionObserver.someLine(of: Self.view("WSOK\r\nCONOK,S1,50000,1000,*\r\nSERVNAME,x\r\n"), startsWith: conok))
        #expect(WebSocketSessionObserver.someLine(of: Self.view("CONOK,S1"), startsWith: conok))
        #expect(!WebSocketSessionObserver.someLine(of: Self.view("WSOK\r\nU,1,1,CONOK,\r\n"), startsWith: conok))
        #expect(Array(WebSocketSessionObserver.lastLine(of: Self.view("REQOK,1\r\nEND,31,x\r\n"))) == Array("END,31,x".utf8))
        #expect(Array(WebSocketSessionObserver.lastLine(of: Self.view("LOOP,0\r\n"))) == Array("LOOP,0".utf8))
        #expect(Array(WebSocketSessionObserver.lastLine(of: Self.view("U,1,1,a"))) == Array("U,1,1,a".utf8))
        #expect(WebSocketSessionObserver.lastLine(of: Self.view("\r\n")).isEmpty)
    }

    /// A frame's last line, found on its contiguous bytes, ends a stream only when it is a
    /// `LOOP` or an `END`, whatever line ends surround it.
    @Test func onlyALastLOOPOrENDEndsAStream() {
        let cases: [(String, Bool)] = [
            ("REQOK,1\r\nEND,31,x\r\n", true), ("LOOP,0\r\n", true), ("\n\nLOOP,0", true), ("END,1,x", true),
            ("U,1,1,a", false), ("\r\n", false), ("", false), ("U,1,1,LOOP,\r\n", false), ("LOOP,0\r\nU,1,1,a\r\n", false),
            ("END", false),
        ]
        for (text, ends) in cases {
            #expect(WebSocketSessionObserver.lastLineEndsStream(Self.view(text)) == ends, "\(text.debugDescription)")
        }
    }

    /// The changes the WebSocket's session timeout follows: bound at `CONOK`, unbound at a
    /// frame ending in `LOOP` or `END`, nothing for other frames.
    @Test func reportsBindsAndUnbinds() {
        var o = WebSocketSessionObserver()
        #expect(o.textWritten(Self.view("WSOK\r\n")) == nil)
        #expect(o.textWritten(Self.view("WSOK\r\nCONOK,S1,50000,5000,*\r\n")) == .bound)
        #expect(o.bound)
        #expect(o.textWritten(Self.view("U,1,1,x\r\nPROBE\r\n")) == nil)
        #expect(o.textWritten(Self.view("U,1,1,CONOK,\r\n")) == nil)
        #expect(o.textWritten(Self.view("U,1,1,y\r\nLOOP,0\r\n")) == .unbound)
        #expect(!o.bound)
        #expect(o.textWritten(Self.view("REQERR,1,20,x\r\n")) == nil)
        // Bound and ended by the same frame: the wait starts again.
        #expect(o.textWritten(Self.view("CONOK,S2,50000,5000,*\r\nEND,31,x\r\n")) == .unbound)
        #expect(!o.bound)
    }
}
