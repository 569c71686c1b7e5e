import Testing

@testable import LightstreamerServer

/// The log's slot queue: first in, first out across wrap-around and growth, removals from the
/// front bounded by what it holds, and value semantics between copies.
@Suite struct PlainRingTests {
    @Test func followsAnArrayThroughAppendsAndRemovals() {
        var ring = PlainRing<Int>()
        var model: [Int] = []
        // A fixed linear congruential sequence, so that a failure repeats.
        var state: UInt64 = 11
        func random() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var next = 0
        for _ in 0..<20_000 {
            if random() % 3 != 0 {
                ring.append(next)
                model.append(next)
                next += 1
            } else {
                let k = Int(random() % 7)
                ring.removeFirst(k)
                model.removeFirst(min(k, model.count))
            }
            #expect(ring.count == model.count)
            #expect(ring.first == model.first)
        }
        for i in model.indices { #expect(ring[i] == model[i]) }
    }

    @Test func keepsOrderWhenItGrowsWrappedAround() {
        var ring = PlainRing<Int>()
        for i in 0..<8 { ring.append(i) }
        ring.removeFirst(5)
        // The buffer of 8 now holds 5, 6, 7 at its end; these wrap to its start, then it grows.
        for i in 8..<20 { ring.append(i) }
        #expect(ring.count == 15)
        #expect((0..<15).map { ring[$0] } == Array(5..<20))
    }

    @Test func removalsOutsideWhatItHoldsAreBounded() {
        var ring = PlainRing<Int>()
        ring.removeFirst(3)
        #expect(ring.isEmpty)
        ring.append(1)
        ring.append(2)
        ring.removeFirst(-4)
        #expect(ring.count == 2)
        ring.removeFirst(.max)
        #expect(ring.isEmpty && ring.first == nil)
        ring.append(3)
        #expect(ring.first == 3 && ring.count == 1)
    }

    @Test func copiesDoNotSeeEachOthersChanges() {
        var a = PlainRing<Int>()
        for i in 0..<6 { a.append(i) }
        var b = a
        b.append(100)
        a.removeFirst(2)
        a.append(200)
        #expect((0..<a.count).map { a[$0] } == [2, 3, 4, 5, 200])
        #expect((0..<b.count).map { b[$0] } == [0, 1, 2, 3, 4, 5, 100])
    }
}
