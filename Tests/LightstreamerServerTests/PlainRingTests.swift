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

    @Test func releasesABufferFarLargerThanWhatItHolds() {
        var ring = PlainRing<Int>()
        for i in 0..<200 { ring.append(i) }
        #expect(ring.capacity == 256)
        // More than a quarter held: kept.
        ring.removeFirst(130)
        ring.releaseUnusedCapacity()
        #expect(ring.capacity == 256)
        // A quarter or less: twice what it holds, rounded up to a power of two, in one step,
        // wrapped around or not, with the order kept.
        for i in 200..<300 { ring.append(i) }
        ring.removeFirst(150)
        #expect(ring.count == 20)
        ring.releaseUnusedCapacity()
        #expect(ring.capacity == 64)
        #expect((0..<20).map { ring[$0] } == Array(280..<300))
        // Not below 8, and nothing at all once empty; it grows again from there.
        ring.removeFirst(19)
        ring.releaseUnusedCapacity()
        #expect(ring.capacity == 8 && ring.first == 299)
        ring.removeFirst(1)
        ring.releaseUnusedCapacity()
        #expect(ring.capacity == 0 && ring.isEmpty)
        ring.append(7)
        #expect(ring.capacity == 8 && ring.first == 7)
    }

    @Test func aCopyKeepsItsBufferWhenTheOtherShrinks() {
        var a = PlainRing<Int>()
        for i in 0..<100 { a.append(i) }
        let b = a
        a.removeFirst(95)
        a.releaseUnusedCapacity()
        #expect(a.capacity == 16 && (0..<5).map { a[$0] } == Array(95..<100))
        #expect(b.count == 100 && b.capacity == 128 && (0..<100).map { b[$0] } == Array(0..<100))
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
