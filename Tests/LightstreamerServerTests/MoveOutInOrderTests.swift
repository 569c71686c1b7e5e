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

    /// Records the runs it is handed: consecutive events of one sink come as one run, across
    /// the posted arrays, and a sink's later events as another.
    final class RunSink: QueuedTableSink, @unchecked Sendable {
        let queue: any TableEventQueue
        let name: String
        let log: RunLog
        init(_ name: String, log: RunLog, queue: any TableEventQueue) {
            self.name = name
            self.log = log
            self.queue = queue
        }
        func deliver(_ event: TableEvent) { deliver(event, shared: nil) }
        func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) {
            if case .update(_, let values, _) = event { log.runs.append(["\(name)\(values[0] ?? "")"]) }
        }
        func deliver(run: inout [QueuedTableEvent], handleNow: Bool) {
            var names: [String] = []
            run.moveOutInOrder { e in
                if case .update(_, let values, _) = e.event { names.append("\(name)\(values[0] ?? "")") }
            }
            log.runs.append(names)
        }
    }

    final class RunLog: @unchecked Sendable {
        var runs: [[String]] = []
    }

    @Test func consecutiveEventsOfOneSinkAreHandedOverAsOneRun() {
        let queue = HoldingQueue()
        let log = RunLog()
        let a = RunSink("a", log: log, queue: queue)
        let b = RunSink("b", log: log, queue: queue)
        func event(_ sink: RunSink, _ value: Int) -> QueuedTableEvent {
            QueuedTableEvent(sink: sink, event: .update(item: 1, values: ["\(value)"], isSnapshot: false), shared: nil)
        }
        var posted = PostedEvents()
        posted.append([event(a, 0), event(a, 1), event(b, 2), event(a, 3), event(a, 4)])
        posted.append([event(a, 5), event(b, 6)])
        posted.handOver()
        #expect(log.runs == [["a0", "a1"], ["b2"], ["a3", "a4", "a5"], ["b6"]])
        #expect(posted.isEmpty)
        // Nothing is held back for the next hand-over.
        posted.handOver()
        #expect(log.runs.count == 4)
    }
}
