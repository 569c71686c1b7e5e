import TLCP
import Testing

@testable import LightstreamerClient

/// docs/protocol/TLCP.md §6 E2 and subscription behaviour in all modes, two-level COMMAND,
/// batching.
@Suite struct EngineSubscriptionTests {
    @Test func e2MergeWithSnapshot() {
        var h = EngineHarness()
        h.connectWS()
        _ = h.takeSent()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1", "i2"], fields: ["f1", "f2"])))
        #expect(
            h.takeSent() == [
                "ws#1 control|LS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=i1%20i2&LS_schema=f1%20f2&LS_snapshot=true&LS_ack=false"
            ])
        h.receive(1, "SUBOK,1,2,2", "U,1,1,a|b", "U,1,2,c|d", "U,1,1,A|", "U,1,2,|D")
        let u = h.updates(1)
        #expect(u.count == 4)
        #expect(u.map(\.values) == [["a", "b"], ["c", "d"], ["A", "b"], ["c", "D"]])
        #expect(u.map(\.isSnapshot) == [true, true, false, false])
        #expect(u.map(\.itemName) == ["i1", "i2", "i1", "i2"])
        #expect(u[2].changed == [true, false])
        #expect(u[3].changed == [false, true])
        #expect(u[2].fields == ["f1": "A", "f2": "b"])
    }

    @Test func rawNullAndEmptyValues() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.raw, items: ["i1"], fields: ["a", "b", "c", "d"], snapshot: nil)))
        h.receive(1, "SUBOK,1,1,4", "U,1,1,#|#|$|z", "U,1,1,|n|#|#")
        let u = h.updates(1)
        #expect(u.map(\.values) == [[nil, nil, "", "z"], [nil, "n", nil, nil]])
        #expect(u[1].changed == [false, true, true, true])
        #expect(u.allSatisfy { !$0.isSnapshot })
    }

    @Test func reqerrFailsTheSubscription() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
        h.receive(1, "REQERR,1,-5,error")
        guard case .failed(-5, "error")? = h.subscriptionEvents(1).last else {
            Issue.record("expected failure -5")
            return
        }
        #expect(h.engine.subscriptions[1] == nil)
    }

    @Test func distinctSnapshotEndsAtEOS() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 3, spec: spec(.distinct, items: ["chat"], fields: ["text"])))
        h.receive(1, "SUBOK,1,1,1", "CONF,1,unlimited,filtered", "U,1,1,old", "EOS,1,1", "U,1,1,new", "CS,1,1", "OV,1,1,3")
        let events = h.subscriptionEvents(3)
        #expect(h.updates(3).map(\.isSnapshot) == [true, false])
        #expect(events.contains { if case .endOfSnapshot("chat", 1) = $0 { true } else { false } })
        #expect(events.contains { if case .clearSnapshot("chat", 1) = $0 { true } else { false } })
        #expect(events.contains { if case .lostUpdates("chat", 1, 3) = $0 { true } else { false } })
        #expect(events.contains { if case .realFrequency(.unlimited) = $0 { true } else { false } })
    }

    @Test func commandRowsByKey() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.command, items: ["portfolio1"], fields: ["key", "command", "qty"])))
        h.receive(1, "SUBCMD,1,1,3,1,2", "U,1,1,a|ADD|10", "U,1,1,b||20", "EOS,1,1", "U,1,1,a|UPDATE|11", "U,1,1,b|DELETE|#")
        let u = h.updates(1)
        #expect(u.map(\.values) == [["a", "ADD", "10"], ["b", "ADD", "20"], ["a", "UPDATE", "11"], ["b", "DELETE", nil]])
        #expect(u.map(\.isSnapshot) == [true, true, false, false])
        // Changed flags are per key: the UPDATE of `a` compares with a's row, not with b's line.
        #expect(u[2].changed == [false, true, true])
        guard case .subscribed(1, 3, 1, 2)? = h.subscriptionEvents(1).first else {
            Issue.record("expected SUBCMD positions")
            return
        }
    }

    @Test func twoLevelCommand() {
        var h = EngineHarness()
        h.connectWS()
        var s = spec(.command, items: ["portfolio1"], fields: ["key", "command", "qty"])
        s.secondLevelFields = ["price"]
        s.secondLevelDataAdapter = "QUOTES"
        h.send(.subscribe(key: 1, spec: s))
        _ = h.takeSent()
        h.receive(1, "SUBCMD,1,1,3,1,2", "U,1,1,item1|ADD|10")
        #expect(
            h.takeSent() == [
                "ws#1 control|LS_reqId=2&LS_op=add&LS_subId=2&LS_mode=MERGE&LS_group=item1&LS_schema=price&LS_data_adapter=QUOTES&LS_snapshot=true&LS_ack=false"
            ])
        h.receive(1, "SUBOK,2,1,1", "U,2,1,12.5")
        let u = h.updates(1)
        #expect(u.last?.values == ["item1", "UPDATE", "10", "12.5"])
        #expect(u.last?.changed == [false, true, false, true])
        #expect(u.last?.fieldNames == ["key", "command", "qty", "price"])
        h.receive(1, "U,1,1,|DELETE|")
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=3&LS_op=delete&LS_subId=2&LS_ack=false"])
        #expect(h.updates(1).last?.values == ["item1", "DELETE", nil, nil])
        // A late second-level update after DELETE is not delivered.
        let before = h.updates(1).count
        h.receive(1, "U,2,1,13")
        #expect(h.updates(1).count == before)
    }

    @Test func secondLevelErrorIsReportedWithTheKey() {
        var h = EngineHarness()
        h.connectWS()
        var s = spec(.command, items: ["portfolio1"], fields: ["key", "command"])
        s.secondLevelFieldSchema = "quote"
        h.send(.subscribe(key: 1, spec: s))
        h.receive(1, "SUBCMD,1,1,2,1,2", "U,1,1,item9|ADD", "REQERR,2,21,bad item")
        #expect(h.subscriptionEvents(1).contains { if case .secondLevelFailed("item9", 21, "bad item") = $0 { true } else { false } })
        #expect(h.updates(1).last?.fieldNames == nil)
    }

    @Test func countMismatchIsError61AndDelete() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1", "f2"])))
        _ = h.takeSent()
        h.receive(1, "SUBOK,1,1,3")
        #expect(h.subscriptionEvents(1).contains { if case .failed(61, _) = $0 { true } else { false } })
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=2&LS_op=delete&LS_subId=1&LS_ack=false"])
        h.receive(1, "UNSUB,1")
        #expect(!h.subscriptionEvents(1).contains { if case .unsubscribed = $0 { true } else { false } })
        #expect(h.status == "CONNECTED:WS-STREAMING")
    }

    @Test func badUpdateWidthFailsOnlyThatSubscription() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1", "f2"])))
        h.receive(1, "SUBOK,1,1,2", "U,1,1,a|b|c")
        #expect(h.subscriptionEvents(1).contains { if case .failed(61, _) = $0 { true } else { false } })
        #expect(h.serverErrors().isEmpty)
        #expect(h.status == "CONNECTED:WS-STREAMING")
    }

    @Test func unsubscribeAndUNSUB() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
        h.receive(1, "SUBOK,1,1,1")
        _ = h.takeSent()
        h.send(.unsubscribe(key: 1))
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=2&LS_op=delete&LS_subId=1&LS_ack=false"])
        h.receive(1, "U,1,1,late", "UNSUB,1")
        #expect(h.updates(1).isEmpty)
        #expect(h.subscriptionEvents(1).contains { if case .unsubscribed = $0 { true } else { false } })
    }

    @Test func frequencyReconfiguredLive() {
        var h = EngineHarness()
        h.connectWS()
        var s = spec(.merge, items: ["i1"], fields: ["f1"])
        s.maxFrequency = .limited(2)
        h.send(.subscribe(key: 1, spec: s))
        h.receive(1, "SUBOK,1,1,1")
        _ = h.takeSent()
        h.send(.changeFrequency(key: 1, .limited(0.5)))
        #expect(h.takeSent() == ["ws#1 control|LS_reqId=2&LS_op=reconf&LS_subId=1&LS_requested_max_frequency=0.5"])
        h.receive(1, "CONF,1,0.5,filtered")
        #expect(h.subscriptionEvents(1).contains { if case .realFrequency(.limited(0.5)) = $0 { true } else { false } })
    }

    @Test func subscriptionsMadeBeforeConnectAreBatchedWithinTheRequestLimit() {
        var h = EngineHarness()
        for k in 1...6 { h.send(.subscribe(key: k, spec: spec(.merge, items: ["item\(k)"], fields: ["last_price"]))) }
        h.send(.connect)
        h.send(.webSocketOpened(1))
        _ = h.takeSent()
        h.receive(1, "WSOK", "CONOK,sid,300,5000,*")
        let sent = h.takeSent()
        #expect(sent.count > 1)
        let lines = sent.flatMap { $0.split(separator: "|").dropFirst() }
        #expect(lines.count == 6)
        for m in sent {
            let body = String(m.dropFirst("ws#1 ".count)).replacingOccurrences("|", "\r\n")
            #expect(body.utf8.count <= 300)
            #expect(m.hasPrefix("ws#1 control|"))
        }
    }

    @Test func subscriptionsSurviveANewSession() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
        h.receive(1, "SUBOK,1,1,1")
        _ = h.takeSent()
        h.receive(1, "END,48,max duration")
        #expect(h.subscriptionEvents(1).contains { if case .unsubscribed = $0 { true } else { false } })
        h.advance(200)
        h.send(.webSocketOpened(h.lastWebSocket ?? 0))
        h.receive(h.lastWebSocket, "WSOK", "CONOK,sid2,70000,5000,*")
        let sent = h.takeSent()
        #expect(sent.contains { $0.contains("LS_old_session=sid") && $0.contains("LS_cause=ws.end.48") })
        #expect(sent.contains { $0.contains("LS_op=add&LS_subId=2") })
    }
}
