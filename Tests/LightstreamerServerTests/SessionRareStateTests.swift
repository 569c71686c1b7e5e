import TLCP
import Testing

@testable import LightstreamerServer

/// A bandwidth limit and client messages live out of line (`SessionRareStorage`): made only by
/// the sessions that use them, copied on write, and with the same effects as inline.
@Suite struct SessionRareStateTests {
    @Test func aSessionWithoutALimitOrMessagesNeverMakesTheBox() {
        var s = SessionScript.subscribed(items: 2, fields: 2)
        for i in 0..<20 {
            s.update(1, item: 1 + i % 2, ["\(i)", "x"])
            s.now += 10
        }
        s.advance(6_000)
        #expect(s.take().filter { $0.hasPrefix("U,") }.count == 20)
        #expect(!s.machine.hasRareState)
    }

    @Test func aBandwidthAskedForAtCreateLimitsTheStreamFromTheStart() {
        var s = SessionScript(
            create: CreateSessionRequest(requestedMaxBandwidth: .kbps(0.8), stream: StreamParameters(sendSync: false)))
        #expect(s.take().contains("CONS,0.8"))
        #expect(s.machine.hasRareState)
        s.subscribe(1, fields: 1, ack: false)
        _ = s.take()
        let value = String(repeating: "x", count: 40)
        for _ in 0..<5 {
            s.update(1, [value + "\(s.now)"])
            s.now += 1
        }
        // 100 bytes per second: not all five 50-byte lines go out at once.
        let first = s.take().filter { $0.hasPrefix("U,") }.count
        #expect(first < 5)
        #expect(s.armed[.bandwidth] != nil)
        s.advance(3_000)
        #expect(first + s.take().filter { $0.hasPrefix("U,") }.count == 5)
    }

    @Test func aCopyOfTheMachineKeepsItsOwnMessageSequences() {
        var s = SessionScript()
        _ = s.take()
        #expect(!s.machine.hasRareState)
        s.record(
            s.machine.message(
                MessageRequest(requestId: "1", message: "a", sequence: "seq", progressive: 1, ack: false),
                origin: .webSocket(SessionScript.stream), now: s.now))
        #expect(s.machine.hasRareState)
        let before = s.machine
        let id = s.machine.nextMessageId
        // A message out of order waits in the copy's sequence, not in the original's.
        var copy = s.machine
        _ = copy.message(
            MessageRequest(requestId: "2", message: "c", sequence: "seq", progressive: 3, ack: false),
            origin: .webSocket(SessionScript.stream), now: s.now)
        #expect(copy.queuedMessageCount == 1)
        #expect(copy.sequences["seq"]?.queued.count == 1)
        #expect(s.machine.queuedMessageCount == 0)
        #expect(s.machine.sequences["seq"]?.queued.isEmpty == true)
        #expect(before.nextMessageId == id)
        #expect(s.machine.nextMessageId == id)
    }
}
