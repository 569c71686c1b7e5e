import TLCP
import Testing

@testable import LightstreamerClient

/// docs/protocol/TLCP.md §6 E7: messages, sequences, outcomes, aborts.
@Suite struct EngineMessageTests {
    @Test func e7SequenceAndOutcomes() {
        var h = EngineHarness()
        h.connectWS()
        _ = h.takeSent()
        h.send(.sendMessage(key: 1, msg("foo", sequence: "seq")))
        #expect(h.takeSent() == ["ws#1 msg|LS_reqId=1&LS_message=foo&LS_sequence=seq&LS_msg_prog=1"])
        h.receive(1, "MSGDONE,seq,1,result:ok")
        for k in 2...4 { h.send(.sendMessage(key: k, msg("foo\(k - 1)", sequence: "seq"))) }
        #expect(h.takeSent().map { $0.components("&").last ?? "" } == ["LS_msg_prog=2", "LS_msg_prog=3", "LS_msg_prog=4"])
        h.receive(1, "MSGFAIL,seq,4,39,2")
        let outcomes = h.messageOutcomes()
        #expect(outcomes.count == 3)
        #expect(outcomes[0].0 == 1)
        if case .processed("result:ok") = outcomes[0].1 {} else { Issue.record("processed expected") }
        #expect(outcomes.dropFirst().map(\.0).sorted() == [3, 4])
        #expect(outcomes.dropFirst().allSatisfy { if case .discarded = $0.1 { true } else { false } })
    }

    @Test func fireAndForgetAndMaxWait() {
        var h = EngineHarness()
        h.connectWS()
        _ = h.takeSent()
        h.send(.sendMessage(key: 1, msg("foo", outcome: false)))
        h.send(.sendMessage(key: 2, msg("foo", sequence: "seq", timeout: 100, outcome: false)))
        #expect(
            h.takeSent() == [
                "ws#1 msg|LS_reqId=1&LS_message=foo&LS_outcome=false&LS_ack=false",
                "ws#1 msg|LS_reqId=2&LS_message=foo&LS_outcome=false&LS_sequence=seq&LS_msg_prog=1&LS_max_wait=100",
            ])
    }

    @Test func failureCodes() {
        var h = EngineHarness()
        h.connectWS()
        for k in 1...4 { h.send(.sendMessage(key: k, msg("m\(k)"))) }
        h.receive(1, "MSGFAIL,*,1,-5,denied", "MSGFAIL,*,2,34,boom", "MSGFAIL,*,3,32,late", "MSGFAIL,*,4,38,timeout")
        let o = h.messageOutcomes()
        #expect(o.count == 3)
        if case (1, .denied(-5, "denied")) = o[0] {} else { Issue.record("deny expected") }
        if case (2, .failed) = o[1] {} else { Issue.record("fail expected") }
        if case (4, .discarded) = o[2] {} else { Issue.record("discard expected") }
        // 3 gets no outcome from the late answer; disconnect aborts it.
        h.send(.disconnect)
        if case (3, .aborted(true))? = h.messageOutcomes().last {} else { Issue.record("abort expected") }
    }

    @Test func abortedWhenDisconnected() {
        var h = EngineHarness()
        h.send(.sendMessage(key: 1, msg("foo")))
        if case (1, .aborted(false))? = h.messageOutcomes().first {} else { Issue.record("abort expected") }
        #expect(h.takeSent().isEmpty)
    }

    @Test func enqueuedWhileDisconnectedGoOutInOneBatch() {
        var h = EngineHarness()
        h.send(.sendMessage(key: 1, msg("a", enqueue: true)))
        h.send(.sendMessage(key: 2, msg("b", sequence: "s", enqueue: true)))
        h.connectWS()
        #expect(h.takeSent().last == "ws#1 msg|LS_reqId=1&LS_message=a&LS_msg_prog=1|LS_reqId=2&LS_message=b&LS_sequence=s&LS_msg_prog=1")
    }

    @Test func messagesOverHTTPOneRequestAtATime() {
        var h = EngineHarness { $0.forcedTransport = .HTTP_STREAMING }
        h.send(.connect)
        h.receive(1, "CONOK,sid,70000,5000,*", "LOOP,0")
        _ = h.takeSent()
        h.send(.sendMessage(key: 1, msg("a")))
        h.send(.sendMessage(key: 2, msg("b")))
        #expect(
            h.takeSent() == [
                "http#3 http://server/lightstreamer/msg.txt?LS_protocol=TLCP-2.5.0&LS_session=sid LS_reqId=1&LS_message=a&LS_msg_prog=1"
            ])
        h.receive(3, "REQOK,1")
        h.send(.connectionClosed(3))
        #expect(
            h.takeSent() == [
                "http#4 http://server/lightstreamer/msg.txt?LS_protocol=TLCP-2.5.0&LS_session=sid LS_reqId=2&LS_message=b&LS_msg_prog=2"
            ])
        h.receive(4, "REQERR,2,-7,no")
        if case (2, .denied(-7, "no"))? = h.messageOutcomes().last {} else { Issue.record("deny expected") }
    }

    @Test func sessionLossAbortsMessagesInFlight() {
        var h = EngineHarness { $0.sessionRecoveryTimeout = 0 }
        h.connectWS()
        h.send(.sendMessage(key: 1, msg("a")))
        h.send(.connectionFailed(1, "x"))
        if case (1, .aborted(true))? = h.messageOutcomes().last {} else { Issue.record("abort expected") }
    }
}

extension String {
    func components(_ sep: Character) -> [String] { split(separator: sep).map(String.init) }
}
