import NIOEmbedded
import Testing

@testable import LightstreamerServer

/// `Array.moveOutInOrder` and `PostedEvents`, which move events out of their arrays on the
/// update path: the order must be kept, every element handed over exactly once, and nothing
/// kept alive afterwards.
@Suite struct MoveOutInOrderTests {
    final class Tracked {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test(arguments: [0, 1, 2, 3, 10, 11])
    func elementsComeOutInOrderOnceAndTheArrayIsEmptied(count: Int) {
        var array = (0..<count).map { Tracked($0) }
        weak var first = array.first
        let capacity = array.capacity
        var seen: [Int] = []
        array.moveOutInOrder { seen.append($0.value) }
        #expect(seen == Array(0..<count))
        #expect(array.isEmpty)
        #expect(array.capacity == capacity, "the capacity is kept for the next batch")
        #expect(first == nil, "a moved element is released once the body is done with it")
    }

    @Test func keptElementsStayAlive() {
        var array = (0..<5).map { Tracked($0) }
        var kept: [Tracked] = []
        array.moveOutInOrder { kept.append($0) }
        #expect(kept.map(\.value) == [0, 1, 2, 3, 4])
        #expect(array.isEmpty)
    }

    @Test func postedEventsReachTheirSinksInPostOrderAcrossBatches() {
        let sink = QueuedRecordingSink(queue: DeliveryPump(eventLoop: EmbeddedEventLoop(), delayMillis: 0))
        var posted = PostedEvents()
        #expect(posted.isEmpty)
        posted.append(DeliveryPumpTests.events(0..<3, to: sink))
        posted.append([])
        posted.append(DeliveryPumpTests.events(3..<7, to: sink))
        #expect(posted.count == 7)
        posted.handOver()
        #expect(posted.isEmpty && posted.count == 0)
        #expect(sink.rows == (0..<7).map { ["\($0)"] })
        posted.handOver()
        #expect(sink.rows.count == 7, "handed over once")
    }
}
