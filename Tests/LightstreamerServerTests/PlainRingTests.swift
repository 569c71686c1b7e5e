import Testing

@testable import LightstreamerServer

/// The log's slot queue: first in, first out across wrap-around and growth, removals from the
/// front bounded by what it holds, and value semantics between copies.
@Suite struct PlainRingTests {
    @Test func followsAnArrayThroughAppendsAndRemovals() {
        var ring = PlainRing<Int>()
        var model: [Int] = []
        var generator = SplitMix(seed: 11)
        var next = 0
        for _ in 0..<20_000 {
            if generator.next() % 3 != 0 {
                ring.append(next)
                model.append(next)
                next += 1
            } else {
                let k = Int(generator.next() % 7)
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

/// A small deterministic generator, so that a failure repeats.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
