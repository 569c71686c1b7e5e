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

    /// The head timeout of a connection's first request, which runs from accept, and a
    /// WebSocket's time to carry a session, which runs from its upgrade. A test whose step must
    /// come within one of them counts the window from before it connects (`onTime`).
    static let headMillis = 3_000
    static let webSocketMillis = 3_000

    static func withLowTimeouts(
        idleMillis: Int = 600, _ body: (LightstreamerServer, MultiThreadedEventLoopGroup) async throws -> Void
    ) async throws {
        try await FrontIntegrationTests.withServer(
            configure: { o in
                o.front.requestHeadTimeoutMillis = headMillis
                o.front.requestBodyTimeoutMillis = 600
                o.front.idleConnectionTimeoutMillis = idleMillis
                o.front.webSocketSessionTimeoutMillis = webSocketMillis
            }, body)
    }

    /// An attempt whose step came after the server's window for it: the server rightly closed
    /// first, so the attempt says nothing about the server.
    struct LateAttempt: Error, CustomStringConvertible {
        let step: String
        var description: String { "every attempt's \(step) came after the server's window for it" }
    }

    /// Runs `scenario` again, on a new connection, when one of its steps was late. The whole test
    /// process has stalled for 5-14 s while the in-process suite starts on a loaded CI machine
    /// ("I/O on closed channel" in two CI runs), longer than any window these tests can afford to
    /// wait out. A server that closes early fails the step before its window ends, which is not
    /// retried; one that never answers makes every attempt late, and the last one fails the test.
    static func retryingLateAttempts(_ attempts: Int = 3, _ scenario: () async throws -> Void) async throws {
        for attempt in 1...attempts {
            do {
                try await scenario()
                return
            } catch let late as LateAttempt where attempt < attempts {
                print("FrontTimeoutTests: attempt \(attempt) was late (\(late.step)); trying again")
            }
        }
    }

    /// Runs `step`, which the server must see before `deadline`: when it throws once the deadline
    /// has passed, the attempt was late (`LateAttempt`). The deadline must not be later than the
    /// server's, so it is counted from before the connection was made.
    static func onTime<T>(
        _ deadline: ContinuousClock.Instant, _ name: String, _ step: () async throws -> T
    ) async throws -> T {
        do {
            return try await step()
        } catch {
            if ContinuousClock.now >= deadline { throw LateAttempt(step: name) }
            throw error
        }
    }

    /// `onTime` for a step that reports whether it was answered: an answer missing once the
    /// deadline has passed makes the attempt late too.
    static func answeredOnTime(
        _ deadline: ContinuousClock.Instant, _ name: String, _ step: () async throws -> Bool
    ) async throws -> Bool {
        let answered = try await onTime(deadline, name, step)
        if !answered && ContinuousClock.now >= deadline { throw LateAttempt(step: name) }
        return answered
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
        // Both heads must be in within the head time (from accept); the body's time (600 ms)
        // is what closes these connections. An attempt whose heads were late is run again.
        try await Self.withLowTimeouts { server, group in
            try await Self.retryingLateAttempts {
                let port = try #require(server.port)
                let start = ContinuousClock.now
                let withLength = try await RawTestConnection.connect(port: port, group: group)
                let chunked = try await RawTestConnection.connect(port: port, group: group)
                try await Self.onTime(start + .milliseconds(Self.headMillis), "heads") {
                    try await withLength.send("POST /lightstreamer/control.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nLS_op=")
                    try await chunked.send(
                        "POST /lightstreamer/control.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nLS_\r\n")
                }
                #expect(await withLength.waitClosed(seconds: 10))
                #expect(await chunked.waitClosed(seconds: 10))
            }
        }
    }

    @Test func aKeepAliveConnectionIsClosedWhenIdleAfterItsResponse() async throws {
        // The first request must be in within the head time (from accept), the second
        // within the idle time after the first answer: an attempt that misses either because
        // the test process stalled is run again.
        let idleMillis = 4_000
        try await Self.withLowTimeouts(idleMillis: idleMillis) { server, group in
            try await Self.retryingLateAttempts {
                let start = ContinuousClock.now
                let c = try await RawTestConnection.connect(port: try #require(server.port), group: group)
                #expect(
                    try await Self.answeredOnTime(start + .milliseconds(Self.headMillis), "first request") {
                        try await c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                        return await c.waitFor("Lightstreamer Swift Server")
                    })
                // A second request on the same connection within the idle time is served.
                try await Task.sleep(for: .milliseconds(200))
                c.forget()
                #expect(
                    try await Self.answeredOnTime(start + .milliseconds(idleMillis), "second request") {
                        try await c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                        return await c.waitFor("Lightstreamer Swift Server")
                    })
                #expect(await c.waitClosed(seconds: 20))
            }
        }
    }

    @Test func aWebSocketWithoutASessionRequestIsClosed() async throws {
        // The upgrade must be in within the head time (from accept) and `wsok` within the
        // WebSocket's time after it: an attempt that misses either because the test process
        // stalled is run again.
        try await Self.withLowTimeouts { server, group in
            try await Self.retryingLateAttempts {
                let start = ContinuousClock.now
                let ws = try await Self.upgradedWebSocket(server: server, group: group, since: start)
                #expect(
                    try await Self.answeredOnTime(start + .milliseconds(Self.webSocketMillis), "wsok") {
                        try await ws.wsText("wsok")
                        return await ws.waitFor("WSOK")
                    })
                // `wsok` is not a session request: the socket is still closed at the timeout.
                #expect(await ws.waitClosed(seconds: 20))
            }
        }
    }

    @Test func aWebSocketCarryingASessionIsNotCut() async throws {
        // The create must be answered within the WebSocket's time after the upgrade: an
        // attempt whose create was late because the test process stalled is run again.
        try await Self.withLowTimeouts { server, group in
            try await Self.retryingLateAttempts {
                let ws = try await Self.sessionOnAWebSocket(server: server, group: group)
                // Well past every timeout of the connection layer.
                try await Task.sleep(for: .milliseconds(4_000))
                #expect(!ws.isClosed)
                try await ws.wsText(
                    "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=counter&LS_schema=count&LS_snapshot=true")
                #expect(await ws.waitFor("U,1,1,", seconds: 20), "received: \(ws.text)")
                await ws.close()
            }
        }
    }

    @Test func aWebSocketWhoseSessionEndedWaitsForTheNextUnderTheTimeout() async throws {
        try await Self.withLowTimeouts { server, group in
            try await Self.retryingLateAttempts {
                let ws = try await Self.sessionOnAWebSocket(server: server, group: group)
                try await Task.sleep(for: .milliseconds(1_000))
                #expect(!ws.isClosed)
                try await ws.wsText("control\r\nLS_reqId=1&LS_op=destroy&LS_close_socket=false")
                #expect(await ws.waitFor("END,"))
                #expect(await ws.waitClosed(seconds: 20), "received: \(ws.text.debugDescription)")
            }
        }
    }

    /// A WebSocket whose upgrade was answered within the head time from `start` (before the
    /// connection was made).
    static func upgradedWebSocket(
        server: LightstreamerServer, group: MultiThreadedEventLoopGroup, since start: ContinuousClock.Instant
    ) async throws -> RawTestConnection {
        let deadline = start + .milliseconds(headMillis)
        let ws = try await onTime(deadline, "upgrade") {
            try await RawTestConnection.webSocket(port: try #require(server.port), group: group)
        }
        #expect(try await answeredOnTime(deadline, "upgrade") { await ws.waitFor(" 101 ") })
        return ws
    }

    /// A WebSocket on which a session was created, its upgrade in within the head time and its
    /// create within the WebSocket's time, both counted from before the connection.
    static func sessionOnAWebSocket(
        server: LightstreamerServer, group: MultiThreadedEventLoopGroup
    ) async throws -> RawTestConnection {
        let start = ContinuousClock.now
        let ws = try await upgradedWebSocket(server: server, group: group, since: start)
        let created = try await answeredOnTime(start + .milliseconds(webSocketMillis), "create") {
            try await ws.wsText(
                "create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false&LS_keepalive_millis=1000")
            return await ws.waitFor("CONOK,", seconds: 20)
        }
        #expect(created)
        return ws
    }

    @Test func anHTTPStreamIsNotCut() async throws {
        // The create must be in within the head time (from accept): an attempt whose request
        // was late because the test process stalled is run again.
        try await Self.withLowTimeouts { server, group in
            try await Self.retryingLateAttempts {
                let deadline = ContinuousClock.now + .milliseconds(Self.headMillis)
                let stream = try await Self.onTime(deadline, "create") {
                    try await RawTestConnection.post(
                        port: try #require(server.port), group: group, path: "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0",
                        body: "LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_adapter_set=DEMO&LS_keepalive_millis=1000&LS_send_sync=false")
                }
                #expect(try await Self.answeredOnTime(deadline, "create") { await stream.waitFor("CONOK,", seconds: 20) })
                try await Task.sleep(for: .milliseconds(3_500))
                #expect(!stream.isClosed)
                stream.forget()
                #expect(await stream.waitFor("PROBE", seconds: 10), "received: \(stream.text)")
                await stream.close()
            }
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
