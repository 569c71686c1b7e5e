import TLCP
import Testing

@testable import LightstreamerClient

/// A bind or recovery request given up before its answer may still be carried out by the
/// server, which then counts what it wrote on that connection as delivered. A plain bind after
/// it would skip those notifications, so from then on every bind carries `LS_recovery_from`
/// (docs/RECOVERY.md). Found by the soak under overload: lost updates after fallback binds.
@Suite struct EngineUnansweredBindTests {
    /// A session on WS-STREAMING with three data notifications received; the stream then ends
    /// with LOOP and the client binds again on the same socket.
    static func sessionRebindingOnWebSocket() -> EngineHarness {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["counter"], fields: ["count"])))
        h.receive(1, "SUBOK,1,1,1", "U,1,1,1", "U,1,1,2")
        h.receive(1, "LOOP,0")
        _ = h.takeSent()
        return h
    }

    @Test func aBindLostBeforeItsAnswerMakesTheNextBindAskForRecovery() {
        var h = Self.sessionRebindingOnWebSocket()
        // The rebind went out on the open socket; the socket breaks before CONOK.
        h.send(.connectionFailed(1, "reset"))
        let fallback = h.takeSent().filter { $0.contains("bind_session") }
        #expect(fallback.count == 1)
        #expect(fallback.first?.contains("LS_recovery_from=3") == true)
        // The server had written U 2 there before (and counted it): PROG 2, U 2 is dropped.
        h.receive(h.lastHTTP, "CONOK,sid,70000,5000,*", "PROG,2", "U,1,1,2", "U,1,1,3")
        #expect(h.status.hasPrefix("CONNECTED"))
        #expect(h.updates(1).compactMap { $0.values[0] } == ["1", "2", "3"])
        #expect(h.engine.hasSession && h.engine.lines.dataCount == 4)
        // Later binds keep saying where the client is.
        h.receive(h.lastHTTP, "LOOP,0")
        let next = h.takeSent().filter { $0.contains("bind_session") }
        #expect(next.count == 1)
        #expect(next.first?.contains("LS_recovery_from=4") == true)
    }

    @Test func aPROGHigherThanTheCountStillEndsTheSession() {
        var h = Self.sessionRebindingOnWebSocket()
        h.send(.connectionFailed(1, "reset"))
        _ = h.takeSent()
        h.receive(h.lastHTTP, "CONOK,sid,70000,5000,*", "PROG,9")
        #expect(h.status == "DISCONNECTED:WILL-RETRY")
    }

    @Test func aRecoveryAttemptThatTimedOutMakesTheBindAfterRecoveryAskForRecovery() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["counter"], fields: ["count"])))
        h.receive(1, "SUBOK,1,1,1", "U,1,1,1")
        h.send(.connectionFailed(1, "reset"))
        h.fire(.recovery)
        #expect(h.takeSent().last?.contains("LS_recovery_from=2") == true)
        // No answer within retryDelay: the attempt is given up and another one follows.
        h.advance(4000)
        let retried = h.takeSent()
        #expect(retried.contains("close#2"))
        #expect(retried.last?.contains("LS_recovery_from=2") == true)
        h.receive(h.lastHTTP, "CONOK,sid,70000,5000,*", "PROG,2", "U,1,1,2", "LOOP,0")
        let opened = h.takeSent()
        #expect(opened.contains("ws.open ws://server/lightstreamer"))
        h.send(.webSocketOpened(h.lastWebSocket ?? 0))
        // The first attempt may still reach the server: the WS bind is a recovery bind too.
        #expect(
            h.takeSent() == [
                "ws#\(h.lastWebSocket ?? 0) wsok",
                "ws#\(h.lastWebSocket ?? 0) bind_session|LS_session=sid&LS_recovery_from=3&LS_send_sync=false&LS_cause=recovery.loop",
            ])
        h.receive(h.lastWebSocket, "WSOK", "CONOK,sid,70000,5000,*", "PROG,3", "U,1,1,3")
        #expect(h.status == "CONNECTED:WS-STREAMING")
        #expect(h.updates(1).compactMap { $0.values[0] } == ["1", "2", "3"])
    }

    @Test func aWebSocketBindThatNeverWentOutLeavesBindsPlain() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.connectionFailed(1, "refused"))
        h.receive(2, "CONOK,sid,70000,5000,*", "LOOP,0")
        _ = h.takeSent()
        // The WS for the bind is refused before it opens: the bind was never sent.
        h.send(.connectionFailed(3, "refused"))
        let sent = h.takeSent().filter { $0.contains("bind_session") }
        #expect(sent.count == 1)
        #expect(sent.first?.contains("LS_recovery_from") == false)
    }
}
