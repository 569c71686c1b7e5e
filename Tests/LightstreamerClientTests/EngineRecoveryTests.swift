import TLCP
import Testing

@testable import LightstreamerClient

/// docs/protocol/TLCP.md §6 E6 and §4.1: recovery, PROG, retry policy, stall detection, malformed
/// lines.
@Suite struct EngineRecoveryTests {
    static let cid = "LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg"

    @Test func e6RecoveryAfterAWebSocketDrop() {
        var h = EngineHarness()
        h.connectWS()
        _ = h.takeSent()
        h.send(.sendMessage(key: 50, msg("foo")))
        #expect(h.takeSent() == ["ws#1 msg|LS_reqId=1&LS_message=foo&LS_msg_prog=1"])
        h.send(.connectionFailed(1, "reset"))
        #expect(h.status == "DISCONNECTED:TRYING-RECOVERY")
        #expect((h.timers[.recovery] ?? 1000) <= 100)
        h.fire(.recovery)
        #expect(
            h.takeSent() == [
                "http#2 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                    + "LS_session=sid&LS_recovery_from=0&LS_polling=true&LS_polling_millis=0&LS_idle_millis=0&LS_cause=ws.error"
            ])
        h.receive(2, "CONOK,sid,70000,5000,*", "PROG,0", "MSGDONE,*,1,", "LOOP,0")
        guard case (50, .processed(""))? = h.messageOutcomes().first else {
            Issue.record("message outcome missing")
            return
        }
        #expect(h.takeSent() == ["close#2", "ws.open ws://server/lightstreamer"])
        h.send(.webSocketOpened(3))
        #expect(h.takeSent() == ["ws#3 wsok", "ws#3 bind_session|LS_session=sid&LS_send_sync=false&LS_cause=recovery.loop"])
        h.receive(3, "WSOK", "CONOK,sid,70000,5000,*")
        #expect(h.status == "CONNECTED:WS-STREAMING")
        #expect(h.messageOutcomes().count == 1)
    }

    @Test func recoveryDropsWhatWasAlreadyReceived() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["counter"], fields: ["count"])))
        h.send(.sendMessage(key: 9, msg("foo")))
        h.receive(1, "SUBOK,1,1,1", "U,1,1,1", "MSGDONE,*,1,", "U,1,1,2") // 4 data notifications
        h.send(.connectionClosed(1))
        h.fire(.recovery)
        #expect(h.takeSent().last?.contains("LS_recovery_from=4") == true)
        // The server still holds from progressive 2: SUBOK and the first U are not resent.
        h.receive(2, "CONOK,sid,70000,5000,*", "PROG,2", "MSGDONE,*,1,", "U,1,1,2", "U,1,1,3", "U,1,1,4", "LOOP,0")
        #expect(h.updates(1).compactMap { $0.values[0] } == ["1", "2", "3", "4"])
        #expect(h.messageOutcomes().count == 1)
        #expect(h.engine.hasSession && h.engine.lines.dataCount == 6)
    }

    @Test func progMismatchStartsANewSession() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.connectionFailed(1, "x"))
        h.fire(.recovery)
        _ = h.takeSent()
        h.receive(2, "CONOK,sid,70000,5000,*", "PROG,100")
        #expect(h.status == "DISCONNECTED:WILL-RETRY")
        #expect(h.takeSent() == ["close#2"])
        h.advance(3999)
        #expect(h.takeSent().isEmpty)
        h.advance(1)
        h.send(.webSocketOpened(h.lastWebSocket ?? 0))
        #expect(
            h.takeSent().last
                == "ws#3 create_session|LS_adapter_set=TEST&\(Self.cid)&LS_old_session=sid&LS_send_sync=false&LS_cause=prog.mismatch.100.0")
    }

    @Test func recoveryFailsAfterSessionRecoveryTimeout() {
        var h = EngineHarness { $0.sessionRecoveryTimeout = 10_000 }
        h.connectWS()
        h.send(.connectionFailed(1, "x"))
        var attempts = 0
        for _ in 0..<10 where h.status == "DISCONNECTED:TRYING-RECOVERY" {
            h.fire(.recovery)
            if let id = h.lastHTTP {
                attempts += 1
                h.send(.connectionFailed(id, "refused"))
            }
            h.advance(4000)
        }
        #expect(attempts >= 2)
        #expect(h.sent.contains { $0.contains("LS_old_session=sid") && $0.contains("recovery.timeout") } || h.status == "CONNECTING")
    }

    @Test func noRecoveryWhenTimeoutIsZero() {
        var h = EngineHarness { $0.sessionRecoveryTimeout = 0 }
        h.connectWS()
        h.send(.connectionFailed(1, "x"))
        #expect(h.status == "DISCONNECTED:WILL-RETRY")
    }

    @Test func conerr4OnRecoveryMeansNewSession() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.connectionFailed(1, "x"))
        h.fire(.recovery)
        h.receive(2, "CONERR,4,recovery not possible")
        #expect(h.status == "DISCONNECTED:WILL-RETRY")
        #expect(h.serverErrors().isEmpty)
    }

    @Test(arguments: [1, 2, 7, 8, 9, 10, 11, 60, 65, 71, -3])
    func terminalCreateErrors(code: Int) {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.webSocketOpened(1))
        h.receive(1, "WSOK", "CONERR,\(code),refused")
        #expect(h.status == "DISCONNECTED")
        #expect(h.serverErrors() == [code])
        #expect(h.timers[.retry] == nil)
    }

    @Test(arguments: [4, 6, 20, 40, 41, 48])
    func retriedCreateErrors(code: Int) {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.webSocketOpened(1))
        h.receive(1, "WSOK", "CONERR,\(code),later")
        #expect(h.status == "DISCONNECTED:WILL-RETRY")
        #expect(h.serverErrors().isEmpty)
        #expect(h.timers[.retry] == 4000)
        _ = h.takeSent()
        h.advance(4000)
        #expect(h.status == "CONNECTING")
        #expect(h.takeSent().contains("ws.open ws://server/lightstreamer"))
    }

    @Test func conerr5RetriesAtOnceWithTTL() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.webSocketOpened(1))
        _ = h.takeSent()
        h.receive(1, "WSOK", "CONERR,5,overloaded")
        #expect(h.takeSent().last?.contains("create_session.txt?LS_protocol=TLCP-2.5.0 LS_ttl_millis=unlimited&LS_polling=true") == true)
    }

    @Test func retryDelayGrowsOnRepeatedFailures() {
        var h = EngineHarness { $0.forcedTransport = .HTTP_STREAMING }
        h.send(.connect)
        var delays: [Int64] = []
        for _ in 0..<9 {
            guard let id = h.lastHTTP else { break }
            h.send(.connectionFailed(id, "refused"))
            if let d = h.timers[.retry] { delays.append(d - h.now) }
            h.fire(.retry)
        }
        #expect(delays.first == 4000)
        #expect(delays.last! > 4000)
    }

    @Test func endTerminatesOrRenews() {
        var h = EngineHarness()
        h.connectWS()
        h.receive(1, "END,31,destroyed")
        #expect(h.status == "DISCONNECTED")
        #expect(h.serverErrors() == [31])

        var h2 = EngineHarness()
        h2.connectWS()
        h2.receive(1, "END,41,again")
        #expect(h2.status == "DISCONNECTED:WILL-RETRY")
        #expect(h2.serverErrors().isEmpty)
    }

    @Test func stalledThenReconnect() {
        var h = EngineHarness()
        h.connectWS(keepalive: 5000)
        h.advance(6999)
        #expect(h.status == "CONNECTED:WS-STREAMING")
        h.advance(1)
        #expect(h.status == "STALLED")
        h.receive(1, "PROBE")
        #expect(h.status == "CONNECTED:WS-STREAMING")
        h.advance(7000)
        #expect(h.status == "STALLED")
        h.advance(3000)
        #expect(h.status == "DISCONNECTED:TRYING-RECOVERY")
        h.fire(.recovery)
        #expect(h.takeSent().last?.contains("LS_cause=ws.stalled") == true)
    }

    @Test func keepaliveTimerIsResetByData() {
        var h = EngineHarness()
        h.connectWS(keepalive: 5000)
        for _ in 0..<5 {
            h.advance(4000)
            h.receive(1, "PROBE")
        }
        #expect(h.status == "CONNECTED:WS-STREAMING")
    }

    @Test func malformedLineIsError61AndNewSession() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
        h.receive(1, "SUBOK,1,1,1", "U,1")
        #expect(h.serverErrors() == [61])
        #expect(h.status == "DISCONNECTED:WILL-RETRY")
        h.advance(200)
        h.send(.webSocketOpened(h.lastWebSocket ?? 0))
        #expect(h.takeSent().contains { $0.contains("LS_old_session=sid") })
        for garbage in ["CONOK,", "SUBOK,x,1,1", "\u{0}\u{1}", "CONS,-", "LOOP,abc", "MSGDONE", "U,1,1,^Pnot json"] {
            var g = EngineHarness()
            g.connectWS()
            g.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
            g.receive(1, "SUBOK,1,1,1", "U,1,1,{}", garbage)
            #expect(
                g.serverErrors().count + g.subscriptionEvents(1).filter { if case .failed(61, _) = $0 { true } else { false } }.count == 1,
                "\(garbage)")
        }
    }

    @Test func e11ReverseHeartbeat() {
        var h = EngineHarness {
            $0.reverseHeartbeatInterval = 1000
            $0.adapterSet = nil
        }
        h.send(.connect)
        h.send(.webSocketOpened(1))
        #expect(h.takeSent().last == "ws#1 create_session|LS_inactivity_millis=1000&\(Self.cid)&LS_send_sync=false&LS_cause=api")
        h.receive(1, "WSOK", "CONOK,sid,70000,5000,*")
        h.advance(1000)
        #expect(h.takeSent() == ["ws#1 heartbeat||"])
        h.advance(500)
        var s = h.engine.settings
        s.requestedMaxBandwidth = .limited(1)
        h.send(.settingsChanged(s, property: "requestedMaxBandwidth"))
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=1&LS_op=constrain&LS_requested_max_bandwidth=1"])
        h.advance(999)
        #expect(h.takeSent().isEmpty)
        h.advance(1)
        #expect(h.takeSent() == ["ws#1 heartbeat||"])
    }

    @Test func reverseHeartbeatOverHTTP() {
        var h = EngineHarness {
            $0.reverseHeartbeatInterval = 1000
            $0.forcedTransport = .HTTP_STREAMING
        }
        h.send(.connect)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        _ = h.takeSent()
        h.advance(1000)
        #expect(h.takeSent() == ["http#3 http://server/lightstreamer/heartbeat.txt?LS_protocol=TLCP-2.5.0&LS_session=sid |"])
    }

    @Test func consAndServerProperties() {
        var h = EngineHarness()
        h.connectWS()
        h.receive(1, "SERVNAME,Lightstreamer HTTP Server", "CLIENTIP,127.0.0.1", "CONS,unlimited", "CONS,12.5")
        let props = h.notifications.compactMap { if case .property(let p) = $0 { return p } else { return nil } }
        #expect(props.contains(.serverSocketName("Lightstreamer HTTP Server")))
        #expect(props.contains(.clientIp("127.0.0.1")))
        #expect(props.contains(.realMaxBandwidth(.unlimited)))
        #expect(props.contains(.realMaxBandwidth(.limited(12.5))))
    }
}
