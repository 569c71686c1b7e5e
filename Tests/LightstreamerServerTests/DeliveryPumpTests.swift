import NIOEmbedded
import Testing

@testable import LightstreamerServer

/// The per-loop mailbox of `DeliveryPump`: events posted by the engine reach their sinks on the
/// loop, in order; past `mailboxLimit` the producer hands them over itself.
@Suite struct DeliveryPumpTests {
    static func events(_ range: Range<Int>, to sink: QueuedRecordingSink) -> [QueuedTableEvent] {
        range.map { QueuedTableEvent(sink: sink, event: .update(item: 1, values: ["\($0)"], isSnapshot: false), shared: nil) }
    }

    @Test func postedEventsReachTheirSinksOnTheLoopInOrder() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let a = QueuedRecordingSink(queue: pump)
        let b = QueuedRecordingSink(queue: pump)
        #expect(!pump.post(Self.events(0..<3, to: a) + Self.events(0..<2, to: b)))
        #expect(!pump.post(Self.events(3..<5, to: a)))
        #expect(a.rows.isEmpty, "nothing before the loop runs")
        loop.run()
        #expect(a.rows == (0..<5).map { ["\($0)"] })
        #expect(b.rows == [["0"], ["1"]])
    }

    @Test func aFullMailboxIsHandedOverByTheProducer() {
        let loop = EmbeddedEventLoop()
        let pump = DeliveryPump(eventLoop: loop, delayMillis: 0)
        let sink = QueuedRecordingSink(queue: pump)
        #expect(!pump.post(Self.events(0..<DeliveryPump.mailboxLimit, to: sink)))
        #expect(sink.rows.isEmpty, "up to the limit, events wait for the loop")
        let full = pump.post(Self.events(DeliveryPump.mailboxLimit..<(DeliveryPump.mailboxLimit + 1), to: sink))
        #expect(full, "past the limit the producer is told to hand over")
        pump.flush()
        // The loop never ran: the producer's flush delivered everything, in order.
        #expect(sink.rows.count == DeliveryPump.mailboxLimit + 1)
        #expect(sink.rows.first == ["0"] && sink.rows.last == ["\(DeliveryPump.mailboxLimit)"])
        loop.run()
        #expect(sink.rows.count == DeliveryPump.mailboxLimit + 1, "nothing delivered twice")
    }
}
