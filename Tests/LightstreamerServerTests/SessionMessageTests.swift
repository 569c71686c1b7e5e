import TLCP
import Testing

@testable import LightstreamerServer

/// Messages: outcomes per protocol version, sequences, skipped progressives.
@Suite struct SessionMessageTests {
    func dispatched(_ s: SessionScript) -> [MessageDispatch] {
        s.actions.compactMap { if case .handleMessage(let d) = $0 { d } else { nil } }
    }

    @Test func unorderedMessageGetsMsgdoneWithTheResponseOn25() {
        var s = SessionScript()
        _ = s.take()
        s.record(
            s.machine.message(
                MessageRequest(requestId: "1", message: "CHAT|hi", progressive: 1, ack: false), origin: .webSocket(SessionScript.stream),
                now: s.now))
        #expect(s.take().isEmpty)
        let d = dispatched(s)
        #expect(d.map(\.text) == ["CHAT|hi"])
        s.record(s.machine.messageHandled(d[0].id, .success("ok, done"), now: s.now))
        #expect(s.take() == ["MSGDONE,*,1,ok%2C done"])
        #expect(s.machine.dataNotificationCount == 1)
    }

    @Test func msgdoneHasTwoArgumentsBefore25() {
        var s = SessionScript(version: .v2_4)
        _ = s.take()
        s.record(
            s.machine.message(
                MessageRequest(requestId: "1", message: "m", sequence: "seq", progressive: 1), origin: .webSocket(SessionScript.stream),
                now: s.now))
        #expect(s.take() == ["REQOK,1"])
        s.record(s.machine.messageHandled(dispatched(s)[0].id, .success(nil), now: s.now))
        #expect(s.take() == ["MSGDONE,seq,1"])
    }

    @Test func refusedMessageGetsMsgfail() {
        var s = SessionScript()
        _ = s.take()
        s.record(
            s.machine.message(
                MessageRequest(requestId: "1", message: "m", progressive: 4, ack: false), origin: .webSocket(SessionScript.stream),
                now: s.now))
        s.record(s.machine.messageHandled(dispatched(s)[0].id, .failure(SessionRefusal(code: -2, message: "no")), now: s.now))
        #expect(s.take() == ["MSGFAIL,*,4,-2,no"])
    }

    @Test func outcomeFalseSendsNothing() {
        var s = SessionScript()
        _ = s.take()
        s.record(
            s.machine.message(
                MessageRequest(requestId: "1", message: "m", progressive: 1, ack: false, outcome: false),
                origin: .webSocket(SessionScript.stream), now: s.now))
        s.record(s.machine.messageHandled(dispatched(s)[0].id, .success(nil), now: s.now))
        #expect(s.take().isEmpty)
    }

    @Test func sequenceIsHandledInOrder() {
        var s = SessionScript()
        _ = s.take()
        func send(_ prog: Int) {
            s.record(
                s.machine.message(
                    MessageRequest(requestId: "r\(prog)", message: "m\(prog)", sequence: "S", progressive: prog, ack: false),
                    origin: .webSocket(SessionScript.stream), now: s.now))
        }
        send(2)
        #expect(dispatched(s).isEmpty)
        send(1)
        #expect(dispatched(s).map(\.text) == ["m1"])
        s.record(s.machine.messageHandled(dispatched(s)[0].id, .success(nil), now: s.now))
        #expect(dispatched(s).map(\.text) == ["m1", "m2"])
        s.record(s.machine.messageHandled(dispatched(s)[1].id, .success("r"), now: s.now))
        #expect(s.take() == ["MSGDONE,S,1,", "MSGDONE,S,2,r"])
        send(1)
        #expect(s.take() == ["MSGFAIL,S,1,32,Progressive 1 already handled or skipped"])
    }

    @Test func duplicateQueuedProgressiveGets33() {
        var s = SessionScript()
        _ = s.take()
        for _ in 0..<2 {
            s.record(
                s.machine.message(
                    MessageRequest(requestId: "1", message: "m", sequence: "S", progressive: 3, ack: false),
                    origin: .webSocket(SessionScript.stream), now: s.now))
        }
        #expect(s.take() == ["MSGFAIL,S,3,33,Progressive 3 already queued"])
    }

    @Test func missingProgressivesAreSkippedAfterMaxWait() {
        var s = SessionScript()
        _ = s.take()
        s.record(
            s.machine.message(
                MessageRequest(requestId: "1", message: "m4", sequence: "S", progressive: 4, maxWait: 100, ack: false),
                origin: .webSocket(SessionScript.stream), now: s.now))
        s.advance(99)
        #expect(dispatched(s).isEmpty)
        s.advance(1)
        #expect(s.take() == ["MSGFAIL,S,3,39,3"])
        #expect(dispatched(s).map(\.text) == ["m4"])
        s.record(s.machine.messageHandled(dispatched(s)[0].id, .success(nil), now: s.now))
        s.record(
            s.machine.message(
                MessageRequest(requestId: "2", message: "m6", sequence: "S", progressive: 6, maxWait: 50, ack: false),
                origin: .webSocket(SessionScript.stream), now: s.now))
        s.advance(50)
        #expect(s.take() == ["MSGDONE,S,4,", "MSGFAIL,S,5,38,Message not received in time"])
    }
}
