import TLCP
import Testing

@testable import LightstreamerClient

/// A server sending fatal `ERROR`s, oversized numbers and explosive patches: the engine ends,
/// clamps or fails the subscription as docs/RELIABILITY.md ("Numbers from a server") says, and
/// never traps.
@Suite struct EngineHostileServerTests {
    // MARK: ERROR

    /// DISCONNECTED first, then the error, and no retry.
    static func expectFatal(_ h: inout EngineHarness, code: Int, message: String) {
        let order = h.notifications.compactMap { n -> String? in
            switch n {
            case .status(let s): return s.rawValue
            case .serverError(let c, let m): return "error \(c) \(m)"
            default: return nil
            }
        }
        #expect(order.suffix(2) == ["DISCONNECTED", "error \(code) \(message)"])
        #expect(h.status == "DISCONNECTED")
        #expect(h.timers[.retry] == nil)
        _ = h.takeSent()
        h.advance(120_000)
        #expect(!h.takeSent().contains { $0.contains("create_session") || $0.contains("bind_session") || $0.hasPrefix("ws.open") })
        #expect(h.status == "DISCONNECTED")
    }

    @Test func errorOnTheStreamAfterConokIsFatal() {
        var h = EngineHarness()
        h.connectWS()
        #expect(h.status == "CONNECTED:WS-STREAMING")
        _ = h.takeNotifications()
        h.receive(1, "ERROR,67,Bad request")
        Self.expectFatal(&h, code: 67, message: "Bad request")
    }

    @Test func errorInAnHTTPControlResponseIsFatal() {
        var h = EngineHarness { $0.forcedTransport = .HTTP_STREAMING }
        h.send(.connect)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        h.receive(2, "CONOK,sid,70000,5000,*")
        #expect(h.status == "CONNECTED:HTTP-STREAMING")
        h.send(.subscribe(key: 7, spec: spec(.merge, items: ["item"], fields: ["f1"])))
        guard let control = h.http("control.txt") else {
            Issue.record("no control request")
            return
        }
        _ = h.takeNotifications()
        h.receive(control, "ERROR,65,Unreadable request")
        Self.expectFatal(&h, code: 65, message: "Unreadable request")
    }

    @Test func errorAfterDisconnectIsIgnored() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.disconnect)
        _ = h.takeNotifications()
        h.receive(1, "ERROR,67,late")
        #expect(h.serverErrors().isEmpty)
    }

    // MARK: ^P bounds

    static let doubling = "[" + (0..<40).map { _ in #"{"op":"copy","from":"/0","path":"/0/-"}"# }.joined(separator: ",") + "]"

    @Test func explosivePatchFailsTheSubscriptionWithError61() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
        h.receive(1, "SUBOK,1,1,1", "U,1,1,[[1]]")
        // Within the bounds a copy applies.
        h.receive(1, #"U,1,1,^P[{"op":"copy","from":"/0","path":"/0/-"}]"#)
        #expect(h.updates(1).last?.values == ["[[1,[1]]]"])
        _ = h.takeSent()
        h.receive(1, "U,1,1,^P" + Self.doubling)
        #expect(h.subscriptionEvents(1).contains { if case .failed(61, _) = $0 { true } else { false } })
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=2&LS_op=delete&LS_subId=1&LS_ack=false"])
        #expect(h.updates(1).count == 2)
        #expect(h.serverErrors().isEmpty)
        #expect(h.status == "CONNECTED:WS-STREAMING")
    }

    @Test func deeplyNestedPatchFailsTheSubscriptionWithError61() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
        h.receive(1, "SUBOK,1,1,1", "U,1,1,{}")
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        h.receive(1, #"U,1,1,^P[{"op":"add","path":"/a","value":"# + deep + "}]")
        #expect(h.subscriptionEvents(1).contains { if case .failed(61, _) = $0 { true } else { false } })
    }

    // MARK: numbers

    @Test func hugeOrNegativeSyncDoesNotTrap() {
        for sync in ["SYNC,999999999999999999", "SYNC,-999999999999999999"] {
            var h = EngineHarness { $0.slowingEnabled = true }
            h.connectWS()
            h.now += 1_000
            h.receive(1, sync)
            // Neither is late (one in the future, the other read as 0 s after 1 s): streaming goes on.
            #expect(h.status == "CONNECTED:WS-STREAMING", "\(sync)")
            #expect(!h.takeSent().contains { $0.contains("force_rebind") }, "\(sync)")
        }
        #expect(ServerNumbers.syncMillis(999_999_999_999_999_999) == 31_536_000_000)
        #expect(ServerNumbers.syncMillis(-5) == 0)
    }

    @Test func hugeConokKeepaliveAndRequestLimitAreClamped() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.webSocketOpened(1))
        h.receive(1, "WSOK", "CONOK,sid,999999999999999999,999999999999999999,*")
        #expect(h.engine.session?.keepaliveMillis == 86_400_000)
        #expect(h.engine.session?.requestLimit == 1_073_741_824)
        // The stall check is armed at most a day ahead.
        #expect(h.timers[.keepalive] == h.now + 86_400_000)
        for (limit, expected) in [("0", 50_000), ("-7", 50_000), ("1", 1), ("70000", 70_000)] {
            var g = EngineHarness()
            g.send(.connect)
            g.send(.webSocketOpened(1))
            g.receive(1, "WSOK", "CONOK,sid,\(limit),-3,*")
            #expect(g.engine.session?.requestLimit == expected)
            #expect(g.engine.session?.keepaliveMillis == 0)
        }
    }

    @Test func hugeLoopDelayIsClampedToADay() {
        var h = EngineHarness {
            $0.forcedTransport = .WS_POLLING
            $0.pollingInterval = 300
        }
        h.send(.connect)
        h.send(.webSocketOpened(1))
        h.receive(1, "WSOK", "CONOK,sid,70000,999999999999999999,*")
        _ = h.takeSent()
        h.receive(1, "LOOP,999999999999999999")
        #expect(h.timers[.poll] == h.now + 86_400_000)
        h.advance(86_400_000)
        // The next poll asks for the clamped values, not the server's.
        #expect(h.takeSent() == ["ws#1 bind_session|LS_polling=true&LS_polling_millis=86400000&LS_idle_millis=86400000&LS_cause=ws.loop"])
    }

    @Test func subokWithHugeCountsIsError61WithoutAllocating() {
        for line in [
            "SUBOK,1,2000000000,1", "SUBOK,1,1,2000000000", "SUBOK,1,999999999999999999,1", "SUBOK,1,0,1",
            "SUBCMD,1,2000000000,2,1,2", "SUBCMD,1,1,2,1,2000000000",
        ] {
            var h = EngineHarness()
            h.connectWS()
            var s = SessionEngine.SubscriptionSpec(mode: line.hasPrefix("SUBCMD") ? .command : .merge)
            s.itemGroup = "group"
            s.fieldSchema = "schema"
            h.send(.subscribe(key: 1, spec: s))
            h.receive(1, line)
            #expect(h.subscriptionEvents(1).contains { if case .failed(61, _) = $0 { true } else { false } }, "\(line)")
            #expect(h.engine.subscriptions[1]?.items.isEmpty ?? true, "\(line)")
            #expect(h.serverErrors().isEmpty, "\(line)")
        }
        // At the bound it is accepted.
        var h = EngineHarness()
        h.connectWS()
        var s = SessionEngine.SubscriptionSpec(mode: .merge)
        s.itemGroup = "group"
        s.fieldSchema = "schema"
        h.send(.subscribe(key: 1, spec: s))
        h.receive(1, "SUBOK,1,100000,10000")
        #expect(h.engine.subscriptions[1]?.items.count == 100_000)
        #expect(h.subscriptionEvents(1).contains { if case .subscribed(100_000, 10_000, nil, nil) = $0 { true } else { false } })
    }

    @Test func updateForAnItemOutOfRangeIsError61() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
        h.receive(1, "SUBOK,1,1,1", "U,1,999999999999,x")
        #expect(h.subscriptionEvents(1).contains { if case .failed(61, _) = $0 { true } else { false } })
    }

    @Test func msgfail39WithAHugeCountDiscardsWithoutTrapping() {
        var h = EngineHarness()
        h.connectWS()
        for k in 1...3 { h.send(.sendMessage(key: k, msg("m\(k)", sequence: "s"))) }
        h.receive(1, "MSGFAIL,s,3,39,9223372036854775807")
        #expect(h.messageOutcomes().map(\.0).sorted() == [1, 2, 3])
        #expect(h.messageOutcomes().allSatisfy { if case .discarded = $0.1 { true } else { false } })
        var g = EngineHarness()
        g.connectWS()
        g.send(.sendMessage(key: 1, msg("m", sequence: "s")))
        g.receive(1, "MSGFAIL,s,-999999999999999999,39,9223372036854775807")
        #expect(g.messageOutcomes().isEmpty)
    }

    @Test func negativeProgDuringRecoveryIsAMismatch() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.connectionFailed(1, "x"))
        h.fire(.recovery)
        _ = h.takeSent()
        h.receive(2, "CONOK,sid,70000,5000,*", "PROG,-999999999999999999")
        #expect(h.status == "DISCONNECTED:WILL-RETRY")
        #expect(h.engine.session == nil)
    }

    @Test func hugeConsBandwidthIsClamped() {
        var h = EngineHarness()
        h.connectWS()
        h.receive(1, "CONS,99999999999999999999999999999999999999")
        #expect(h.engine.session?.realMaxBandwidth == .limited(1_000_000_000))
    }
}
