import TLCP
import Testing

@testable import LightstreamerClient

/// docs/protocol/TLCP.md §6 E1, E3, E8, E9, E10 and the create/bind lifecycle.
@Suite struct EngineCreateTests {
    static let cid = "LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg"

    @Test func e1WebSocketCreate() {
        var h = EngineHarness()
        h.send(.connect)
        #expect(h.takeSent() == ["ws.open ws://server/lightstreamer"])
        #expect(h.status == "CONNECTING")
        h.send(.webSocketOpened(h.lastWebSocket ?? 0))
        #expect(h.takeSent() == ["ws#1 wsok", "ws#1 create_session|LS_adapter_set=TEST&\(Self.cid)&LS_send_sync=false&LS_cause=api"])
        h.receive(1, "WSOK", "CONOK,sid,70000,5000,*")
        #expect(h.status == "CONNECTED:WS-STREAMING")
        #expect(h.statuses == ["CONNECTING", "CONNECTED:WS-STREAMING"])
        #expect(h.timers[.keepalive] == Int64(7000))
        #expect(h.timers[.transport] == nil)
    }

    @Test func e3HTTPCreateStreamingBindAndControl() {
        var h = EngineHarness { $0.forcedTransport = .HTTP_STREAMING }
        h.send(.connect)
        #expect(
            h.takeSent() == [
                "http#1 http://server/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0 "
                    + "LS_polling=true&LS_polling_millis=0&LS_idle_millis=0&LS_adapter_set=TEST&\(Self.cid)&LS_cause=api"
            ])
        h.receive(1, "CONOK,sid,70000,5000,*")
        #expect(h.status == "CONNECTED:STREAM-SENSING")
        h.receive(1, "LOOP,0")
        #expect(
            h.takeSent() == [
                "close#1",
                "http#2 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                    + "LS_session=sid&LS_content_length=50000000&LS_send_sync=false&LS_cause=http.loop",
            ])
        h.send(.subscribe(key: 7, spec: spec(.distinct, items: ["item"], fields: ["f1", "f2"], snapshot: .no)))
        #expect(
            h.takeSent() == [
                "http#3 http://server/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0&LS_session=sid "
                    + "LS_reqId=1&LS_op=add&LS_subId=1&LS_mode=DISTINCT&LS_group=item&LS_schema=f1%20f2&LS_snapshot=false"
            ])
        h.receive(3, "REQOK,1")
        h.send(.connectionClosed(3))
        h.receive(2, "CONOK,sid,70000,5000,*")
        #expect(h.status == "CONNECTED:HTTP-STREAMING")
        h.receive(2, "SUBOK,1,1,2")
        guard case .subscribed(1, 2, nil, nil)? = h.subscriptionEvents(7).first else {
            Issue.record("no subscribed event")
            return
        }
        // LOOP at the end of the content length: a new streaming bind at once.
        _ = h.takeSent()
        h.receive(2, "LOOP,0")
        #expect(
            h.takeSent() == [
                "close#2",
                "http#4 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                    + "LS_session=sid&LS_content_length=50000000&LS_send_sync=false&LS_cause=http.loop",
            ])
    }

    @Test func e8ControlLinkMovesTheBind() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.webSocketOpened(1))
        h.receive(1, "WSOK", "CONOK,sid,70000,5000,host.com:90")
        _ = h.takeSent()
        h.receive(1, "LOOP,0")
        let sent = h.takeSent()
        #expect(sent.first == "close#1")
        #expect(sent.dropFirst().first == "ws.open ws://host.com:90/lightstreamer")
        let props = h.notifications.compactMap { if case .property(.serverInstanceAddress(let a)) = $0 { return a } else { return nil } }
        #expect(props == ["http://host.com:90"])
    }

    @Test func controlLinkForHTTPControls() {
        var h = EngineHarness {
            $0.forcedTransport = .HTTP_STREAMING
            $0.requestedMaxBandwidth = .unlimited
        }
        h.send(.connect)
        h.receive(1, "CONOK,sid,70000,5000,host.com", "LOOP,0")
        h.receive(h.lastHTTP, "CONOK,sid,70000,5000,*")
        _ = h.takeSent()
        var s = h.engine.settings
        s.requestedMaxBandwidth = .limited(1)
        h.send(.settingsChanged(s, property: "requestedMaxBandwidth"))
        #expect(
            h.takeSent() == [
                "http#3 http://host.com/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0&LS_session=sid "
                    + "LS_reqId=1&LS_op=constrain&LS_requested_max_bandwidth=1"
            ])
    }

    @Test func serverInstanceAddressIgnored() {
        var h = EngineHarness { $0.serverInstanceAddressIgnored = true }
        h.connectWS()
        h.receive(1, "LOOP,0")
        #expect(!h.takeSent().contains { $0.contains("host.com") })
    }

    @Test func e9WebSocketUnavailableFallsBackToHTTPThenPolling() {
        var h = EngineHarness()
        h.send(.connect)
        _ = h.takeSent()
        h.send(.connectionFailed(1, "refused"))
        #expect(
            h.takeSent()
                == [
                    "close#1",
                    "http#2 http://server/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0 "
                        + "LS_polling=true&LS_polling_millis=0&LS_idle_millis=0&LS_adapter_set=TEST&\(Self.cid)&LS_cause=ws.unavailable",
                ].filter { $0 != "close#1" })
        h.receive(2, "CONOK,sid,70000,5000,*", "LOOP,0")
        // WS gets another chance for the bind; it times out too.
        #expect(h.takeSent() == ["close#2", "ws.open ws://server/lightstreamer"]) // wsok and the bind wait for the open
        h.advance(4000)
        #expect(
            h.takeSent() == [
                "close#3",
                "http#4 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                    + "LS_session=sid&LS_content_length=50000000&LS_send_sync=false&LS_cause=ws.unavailable",
            ])
        // The streaming bind gets nothing within retryDelay (a buffering proxy may hold it while
        // the server has bound the session): force_rebind on a control connection, the stream
        // stays open.
        h.advance(4000)
        #expect(
            h.takeSent() == [
                "http#5 http://server/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0&LS_session=sid "
                    + "LS_reqId=1&LS_op=force_rebind&LS_cause=http.streaming.unavailable"
            ])
        h.receive(5, "REQOK,1")
        // The held stream finally delivers CONOK, then the LOOP the force_rebind caused.
        h.receive(4, "CONOK,sid,70000,5000,*", "LOOP,0")
        #expect(
            h.takeSent() == [
                "close#4",
                "http#6 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                    + "LS_session=sid&LS_polling=true&LS_polling_millis=0&LS_idle_millis=19000&LS_cause=http.loop",
            ])
        h.receive(6, "CONOK,sid,70000,19000,*")
        #expect(h.status == "CONNECTED:HTTP-POLLING")
        #expect(h.engine.session?.id == "sid")
    }

    /// The WS create failed but WS works for the bind: the session streams over WS.
    @Test func webSocketCreateFailedButBindOverWebSocketWorks() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.connectionFailed(1, "refused"))
        h.receive(2, "CONOK,sid,70000,5000,*", "LOOP,0")
        _ = h.takeSent()
        h.send(.webSocketOpened(3))
        #expect(h.takeSent() == ["ws#3 wsok", "ws#3 bind_session|LS_session=sid&LS_send_sync=false&LS_cause=http.loop"])
        h.receive(3, "WSOK", "CONOK,sid,70000,5000,*")
        #expect(h.status == "CONNECTED:WS-STREAMING")
        // Later session: WS first again.
        h.receive(3, "END,48,expired")
        h.advance(10_000)
        #expect(h.takeSent().contains("ws.open ws://server/lightstreamer"))
    }

    /// The mute HTTP stream never answers, not even the force_rebind's LOOP: after a further
    /// retryDelay it is given up and the same session is bound in polling mode.
    @Test func muteStreamingBindWithNoLoopAfterForceRebindBindsPolling() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.connectionFailed(1, "refused"))
        h.receive(2, "CONOK,sid,70000,5000,*", "LOOP,0")
        h.send(.connectionFailed(3, "refused")) // the WS bind
        h.advance(4000)
        _ = h.takeSent()
        h.advance(4000)
        let sent = h.takeSent()
        #expect(sent.contains("close#4"))
        // The server may have written data on the mute stream: the polling bind says where the
        // client is (EngineUnansweredBindTests).
        #expect(
            sent.last == "http#6 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                + "LS_session=sid&LS_recovery_from=0&LS_polling=true&LS_polling_millis=0&LS_idle_millis=19000&LS_cause=http.streaming.unavailable"
        )
        h.receive(6, "CONOK,sid,70000,19000,*")
        #expect(h.status == "CONNECTED:HTTP-POLLING")
    }

    /// HTTP-STREAMING forced: no fallback to polling, so a mute stream is a lost stream.
    @Test func muteStreamingBindWithoutFallbackIsRecovered() {
        var h = EngineHarness { $0.forcedTransport = .HTTP_STREAMING }
        h.send(.connect)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        _ = h.takeSent()
        h.advance(4000)
        #expect(!h.takeSent().contains { $0.contains("force_rebind") })
        #expect(h.status == "DISCONNECTED:TRYING-RECOVERY")
    }

    @Test func e10WebSocketPollingLoop() {
        var h = EngineHarness {
            $0.forcedTransport = .WS_POLLING
            $0.pollingInterval = 300
        }
        h.send(.connect)
        h.send(.webSocketOpened(1))
        #expect(
            h.takeSent() == [
                "ws.open ws://server/lightstreamer", "ws#1 wsok",
                "ws#1 create_session|LS_polling=true&LS_polling_millis=300&LS_idle_millis=19000&LS_adapter_set=TEST&\(Self.cid)&LS_cause=api",
            ])
        h.receive(1, "WSOK", "CONOK,sid,70000,15000,*")
        #expect(h.status == "CONNECTED:WS-POLLING")
        h.receive(1, "LOOP,300")
        #expect(h.takeSent().isEmpty)
        h.advance(299)
        #expect(h.takeSent().isEmpty)
        h.advance(1)
        // Same socket: no LS_session; the LOOP delay and the idle time CONOK granted.
        #expect(h.takeSent() == ["ws#1 bind_session|LS_polling=true&LS_polling_millis=300&LS_idle_millis=15000&LS_cause=ws.loop"])
        // Each poll has an idle timer: the idle time it asked for + retryDelay.
        #expect(h.timers[.transport] == h.now + 15000 + 4000)
        h.receive(1, "CONOK,sid,70000,25000,*", "LOOP,600")
        h.advance(599)
        #expect(h.takeSent().isEmpty)
        h.advance(1)
        #expect(h.takeSent() == ["ws#1 bind_session|LS_polling=true&LS_polling_millis=600&LS_idle_millis=25000&LS_cause=ws.loop"])
        #expect(h.timers[.transport] == h.now + 25000 + 4000)
    }

    @Test func httpPollingBindsAfterEachLoop() {
        var h = EngineHarness { $0.forcedTransport = .HTTP_POLLING }
        h.send(.connect)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        #expect(
            h.takeSent().last == "http#2 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                + "LS_session=sid&LS_polling=true&LS_polling_millis=0&LS_idle_millis=19000&LS_cause=http.loop")
        h.receive(2, "CONOK,sid,70000,19000,*")
        #expect(h.status == "CONNECTED:HTTP-POLLING")
        h.receive(2, "LOOP,0")
        #expect(
            h.takeSent() == [
                "close#2",
                "http#3 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                    + "LS_session=sid&LS_polling=true&LS_polling_millis=0&LS_idle_millis=19000&LS_cause=http.loop",
            ])
        // A poll that never answers: idle timeout, then recovery.
        h.advance(23000)
        #expect(h.status == "DISCONNECTED:TRYING-RECOVERY")
    }

    /// Polling options go into the first poll; later polls carry the LOOP delay and the idle
    /// time of the previous poll's CONOK, and wait the LOOP delay before binding.
    @Test func httpPollingHonoursOptionsLoopDelayAndConokIdle() {
        var h = EngineHarness {
            $0.forcedTransport = .HTTP_POLLING
            $0.pollingInterval = 1000
            $0.idleTimeout = 5000
        }
        h.send(.connect)
        #expect(h.takeSent().last?.contains("LS_polling=true&LS_polling_millis=0&LS_idle_millis=0&") == true)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        #expect(
            h.takeSent().last == "http#2 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                + "LS_session=sid&LS_polling=true&LS_polling_millis=1000&LS_idle_millis=5000&LS_cause=http.loop")
        #expect(h.timers[.transport] == h.now + 5000 + 4000)
        h.receive(2, "CONOK,sid,70000,3000,*")
        h.receive(2, "LOOP,800")
        #expect(h.takeSent() == ["close#2"])
        h.advance(799)
        #expect(h.takeSent().isEmpty)
        h.advance(1)
        #expect(
            h.takeSent() == [
                "http#3 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                    + "LS_session=sid&LS_polling=true&LS_polling_millis=800&LS_idle_millis=3000&LS_cause=http.loop"
            ])
        #expect(h.timers[.transport] == h.now + 3000 + 4000)
        // A poll answered at the end of its idle time is not a timeout.
        h.advance(3000)
        h.receive(3, "CONOK,sid,70000,3000,*", "LOOP,0")
        #expect(h.status == "CONNECTED:HTTP-POLLING")
        #expect(h.takeSent().last?.hasSuffix("LS_polling_millis=0&LS_idle_millis=3000&LS_cause=http.loop") == true)
    }

    /// `forcedTransport` changed while the WS create is under way: once CONOK arrives the
    /// session is moved with force_rebind (not a new session).
    @Test func forcedTransportChangedDuringCreateSwitchesAfterConok() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.webSocketOpened(1))
        _ = h.takeSent()
        var s = h.engine.settings
        s.forcedTransport = .HTTP_POLLING
        h.send(.settingsChanged(s, property: "forcedTransport"))
        #expect(h.takeSent().isEmpty)
        h.receive(1, "WSOK", "CONOK,sid,70000,5000,*")
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=1&LS_op=force_rebind&LS_close_socket=true&LS_cause=api"])
        h.receive(1, "REQOK,1", "LOOP,0")
        #expect(
            h.takeSent().last == "http#2 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                + "LS_session=sid&LS_polling=true&LS_polling_millis=0&LS_idle_millis=19000&LS_cause=ws.loop")
        h.receive(2, "CONOK,sid,70000,19000,*")
        #expect(h.status == "CONNECTED:HTTP-POLLING")
    }

    /// Between two polls the session is unbound: a live `forcedTransport` change needs no
    /// force_rebind, the next bind (after the LOOP delay) is on the new transport.
    @Test func forcedTransportChangedBetweenPollsBindsTheNewTransport() {
        var h = EngineHarness { $0.forcedTransport = .HTTP_POLLING }
        h.send(.connect)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        h.receive(2, "CONOK,sid,70000,19000,*", "LOOP,500")
        _ = h.takeSent()
        var s = h.engine.settings
        s.forcedTransport = .HTTP_STREAMING
        h.send(.settingsChanged(s, property: "forcedTransport"))
        #expect(h.takeSent().isEmpty)
        h.advance(500)
        #expect(
            h.takeSent() == [
                "http#3 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                    + "LS_session=sid&LS_content_length=50000000&LS_send_sync=false&LS_cause=http.loop"
            ])
        h.receive(3, "CONOK,sid,70000,5000,*")
        #expect(h.status == "CONNECTED:HTTP-STREAMING")
    }

    /// Streaming → polling on a live switch: the polling bind uses the options, not the
    /// streaming LOOP/CONOK values.
    @Test func forcedPollingSwitchLiveUsesTheOptions() {
        var h = EngineHarness {
            $0.pollingInterval = 700
            $0.idleTimeout = 9000
        }
        h.connectWS()
        _ = h.takeSent()
        var s = h.engine.settings
        s.forcedTransport = .WS_POLLING
        h.send(.settingsChanged(s, property: "forcedTransport"))
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=1&LS_op=force_rebind&LS_cause=api"])
        h.receive(1, "LOOP,0")
        #expect(
            h.takeSent() == ["ws#1 bind_session|LS_session=sid&LS_polling=true&LS_polling_millis=700&LS_idle_millis=9000&LS_cause=ws.loop"])
        h.receive(1, "CONOK,sid,70000,9000,*")
        #expect(h.status == "CONNECTED:WS-POLLING")
    }

    @Test func forcedTransportSwitchedLive() {
        var h = EngineHarness()
        h.connectWS()
        _ = h.takeSent()
        var s = h.engine.settings
        s.forcedTransport = .HTTP_STREAMING
        h.send(.settingsChanged(s, property: "forcedTransport"))
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=1&LS_op=force_rebind&LS_close_socket=true&LS_cause=api"])
        h.receive(1, "LOOP,0")
        #expect(
            h.takeSent().last == "http#2 http://server/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0 "
                + "LS_session=sid&LS_content_length=50000000&LS_send_sync=false&LS_cause=ws.loop")
        h.receive(2, "CONOK,sid,70000,5000,*")
        #expect(h.status == "CONNECTED:HTTP-STREAMING")
    }

    @Test func optionsGoIntoTheCreate() {
        var h = EngineHarness {
            $0.keepaliveInterval = 5000
            $0.reverseHeartbeatInterval = 1000
            $0.requestedMaxBandwidth = .limited(40)
            $0.user = "u"
            $0.password = "p"
        }
        h.send(.connect)
        h.send(.webSocketOpened(1))
        #expect(
            h.takeSent().last == "ws#1 create_session|LS_keepalive_millis=5000&LS_inactivity_millis=1000&LS_requested_max_bandwidth=40"
                + "&LS_adapter_set=TEST&LS_user=u&\(Self.cid)&LS_send_sync=false&LS_cause=api&LS_password=p")
    }

    @Test func disconnectDestroysTheSession() {
        var h = EngineHarness()
        h.connectWS()
        _ = h.takeSent()
        h.send(.disconnect)
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=1&LS_op=destroy&LS_close_socket=true&LS_cause=api", "close#1"])
        #expect(h.status == "DISCONNECTED")
        #expect(h.timers.isEmpty)
        // connect() again starts over.
        h.send(.connect)
        #expect(h.takeSent() == ["ws.open ws://server/lightstreamer"])
    }
}

@Suite struct EngineHeaderTests {
    @Test func headersOnCreationOnlyCreateOverHTTPThenBindOverWS() {
        var h = EngineHarness {
            $0.httpExtraHeaders = ["X-A": "1"]
            $0.httpExtraHeadersOnSessionCreationOnly = true
        }
        h.send(.connect)
        #expect(h.takeSent().first?.hasPrefix("http#1 http://server/lightstreamer/create_session.txt") == true)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        #expect(h.takeSent() == ["close#1", "ws.open ws://server/lightstreamer"])
        h.send(.webSocketOpened(2))
        #expect(h.takeSent().last == "ws#2 bind_session|LS_session=sid&LS_send_sync=false&LS_cause=http.loop")
        h.receive(2, "WSOK", "CONOK,sid,70000,5000,*")
        #expect(h.status == "CONNECTED:WS-STREAMING")
        #expect(h.engine.extraHeaders(creating: false).isEmpty)
        #expect(h.engine.extraHeaders(creating: true) == ["X-A": "1"])
    }
}

/// A connection refused locally for good (the server's TLS key is not among the pins).
@Suite struct EngineRejectedConnectionTests {
    @Test func rejectedCreateIsError62WithoutRetry() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.connectionRejected(1, code: 62, message: "pins"))
        #expect(h.status == "DISCONNECTED")
        #expect(h.serverErrors() == [62])
        #expect(h.timers[.retry] == nil)
        #expect(h.timers[.transport] == nil)
        _ = h.takeSent()
        h.advance(60_000)
        #expect(h.takeSent().isEmpty)
    }

    @Test func rejectedBindEndsTheSession() {
        var h = EngineHarness { $0.forcedTransport = .HTTP }
        h.send(.connect)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        _ = h.takeNotifications()
        h.send(.connectionRejected(2, code: 62, message: "pins"))
        #expect(h.statuses == ["DISCONNECTED"])
        #expect(h.serverErrors() == [62])
        #expect(h.engine.session == nil)
        // A late rejection of a closed connection changes nothing.
        h.send(.connectionRejected(2, code: 62, message: "pins"))
        #expect(h.serverErrors() == [62])
    }
}
