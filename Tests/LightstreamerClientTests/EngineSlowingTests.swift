import TLCP
import Testing

@testable import LightstreamerClient

/// `slowingEnabled` (docs/protocol/CLIENT-API.md §6, docs/protocol/TLCP.md §3.5, §5.4): SYNC asked
/// for only with slowing on; a SYNC read much later than the server wrote it (seconds since the
/// bind) moves the session to polling with force_rebind (`LS_cause=slow`), never a new session.
@Suite struct EngineSlowingTests {
    @Test func slowingOffAsksForNoSyncAndIgnoresIt() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.webSocketOpened(1))
        #expect(h.takeSent().last?.contains("LS_send_sync=false") == true)
        h.receive(1, "WSOK", "CONOK,sid,70000,5000,*")
        h.now += 30_000
        h.receive(1, "SYNC,1")
        #expect(!h.takeSent().contains { $0.contains("force_rebind") })
        #expect(h.status == "CONNECTED:WS-STREAMING")
    }

    @Test func lateSyncOverWebSocketSwitchesToWebSocketPolling() {
        var h = EngineHarness { $0.slowingEnabled = true }
        h.send(.connect)
        h.send(.webSocketOpened(1))
        let create = h.takeSent().last ?? ""
        #expect(!create.contains("LS_send_sync"))
        h.receive(1, "WSOK", "CONOK,sid,70000,5000,*")
        // In time (the server's seconds since the bind match the client's clock).
        h.now += 10_000
        h.receive(1, "SYNC,10")
        h.now += 5_000
        h.receive(1, "SYNC,12") // 3 s late: tolerated
        #expect(h.takeSent().isEmpty)
        // Read 10 s after the server wrote it: falling behind.
        h.now += 10_000
        h.receive(1, "SYNC,15")
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=1&LS_op=force_rebind&LS_cause=slow"])
        // A second late SYNC before the LOOP asks nothing more.
        h.now += 1_000
        h.receive(1, "SYNC,15")
        #expect(h.takeSent().isEmpty)
        h.receive(1, "REQOK,1", "LOOP,0")
        #expect(
            h.takeSent() == ["ws#1 bind_session|LS_session=sid&LS_polling=true&LS_polling_millis=0&LS_idle_millis=19000&LS_cause=ws.loop"])
        h.receive(1, "CONOK,sid,70000,19000,*")
        #expect(h.status == "CONNECTED:WS-POLLING")
        #expect(h.engine.session?.id == "sid")
    }

    @Test func lateSyncOverHTTPStreamingSwitchesToHTTPPolling() {
        var h = EngineHarness {
            $0.slowingEnabled = true
            $0.forcedTransport = .HTTP
        }
        h.send(.connect)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        let bind = h.takeSent().last ?? ""
        #expect(bind.hasSuffix("LS_session=sid&LS_content_length=50000000&LS_cause=http.loop"))
        h.receive(2, "CONOK,sid,70000,5000,*")
        h.now += 20_000
        h.receive(2, "SYNC,5")
        #expect(
            h.takeSent() == [
                "http#3 http://server/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0&LS_session=sid "
                    + "LS_reqId=1&LS_op=force_rebind&LS_cause=slow"
            ])
        h.receive(3, "REQOK,1")
        h.receive(2, "LOOP,0")
        #expect(
            h.takeSent().last == "http#4 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                + "LS_session=sid&LS_polling=true&LS_polling_millis=0&LS_idle_millis=19000&LS_cause=http.loop")
    }

    /// A forced streaming transport leaves no polling to slow down to.
    @Test func forcedStreamingTransportIsNotSlowedDown() {
        var h = EngineHarness {
            $0.slowingEnabled = true
            $0.forcedTransport = .WS_STREAMING
        }
        h.connectWS()
        _ = h.takeSent()
        h.now += 30_000
        h.receive(1, "SYNC,1")
        #expect(h.takeSent().isEmpty)
    }

    /// The seed: a change applies to the next connection attempt, not to the current stream.
    @Test func enablingSlowingMidStreamAppliesToTheNextBind() {
        var h = EngineHarness()
        h.connectWS()
        _ = h.takeSent()
        var s = h.engine.settings
        s.slowingEnabled = true
        h.send(.settingsChanged(s, property: "slowingEnabled"))
        h.now += 30_000
        h.receive(1, "SYNC,1")
        #expect(h.takeSent().isEmpty)
    }
}
