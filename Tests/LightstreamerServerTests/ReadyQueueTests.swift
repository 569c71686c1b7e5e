import Testing

@testable import LightstreamerServer

/// `ReadyQueue`: what a `DeliveryPump` run leaves goes first at the next, each once, before
/// what was added meanwhile.
@Suite struct ReadyQueueTests {
    @Test func aRunTakesEverythingAddedInOrder() {
        var queue = ReadyQueue<Int>()
        #expect(queue.isEmpty)
        #expect(queue.take().isEmpty)
        for i in 1...3 { queue.append(i) }
        #expect(Array(queue.take()) == [1, 2, 3])
        #expect(queue.isEmpty)
        #expect(queue.take().isEmpty)
    }

    @Test func whatARunLeavesComesFirstThenWhatWasAddedSince() {
        var queue = ReadyQueue<Int>()
        for i in 1...5 { queue.append(i) }
        let batch = queue.take()
        // The run got through 1 and 2; 6 and 7 came meanwhile.
        queue.append(6)
        queue.append(7)
        queue.leave(batch[(batch.startIndex + 2)...])
        #expect(!queue.isEmpty)
        let next = queue.take()
        #expect(Array(next) == [3, 4, 5])
        // This run gets through 3 only.
        queue.leave(next[(next.startIndex + 1)...])
        #expect(Array(queue.take()) == [4, 5])
        #expect(Array(queue.take()) == [6, 7])
        #expect(queue.isEmpty)
    }

    @Test func leavingNothingLeavesTheAddedOnes() {
        var queue = ReadyQueue<Int>()
        queue.append(1)
        let batch = queue.take()
        queue.append(2)
        queue.leave(batch[batch.endIndex...])
        #expect(Array(queue.take()) == [2])
    }

    /// Not what a pump does (its runs come one at a time), but kept in order all the same.
    @Test func twoLeftRestsKeepTheirOrder() {
        var queue = ReadyQueue<Int>()
        for i in 1...4 { queue.append(i) }
        let batch = queue.take()
        queue.leave(batch[(batch.startIndex + 2)...])
        queue.leave(batch[(batch.startIndex + 1)..<(batch.startIndex + 2)])
        #expect(Array(queue.take()) == [2, 3, 4])
    }
}
