import NIOCore
import Testing

@testable import LightstreamerServer

/// The pump's wait between runs while work is left (`SaturationYield`): short, and long once
/// per `pollEveryNanos` of continuous work, so that a saturated loop still polls its sockets.
@Suite struct SaturationYieldTests {
    static let ms: UInt64 = 1_000_000

    @Test func aBusyPumpWaitsLongOncePerPeriod() {
        var y = SaturationYield()
        var longs: [UInt64] = []
        // A run every 4 ms for a second, always with work left.
        for t in stride(from: UInt64(1_000) * Self.ms, to: 2_000 * Self.ms, by: UInt64.Stride(4 * Self.ms)) {
            let wait = y.wait(at: t)
            #expect(wait == SaturationYield.short || wait == SaturationYield.long)
            if wait == SaturationYield.long { longs.append(t) }
        }
        // 1 s of work: one long wait per 100 ms, never two within 100 ms.
        #expect(longs.count == 9)
        for (a, b) in zip(longs, longs.dropFirst()) { #expect(b - a >= SaturationYield.pollEveryNanos) }
        #expect(longs.first == 1_100 * Self.ms)
    }

    @Test func aPumpThatRanOutOfWorkStartsAfresh() {
        var y = SaturationYield()
        #expect(y.wait(at: 0) == SaturationYield.short)
        #expect(y.wait(at: 99 * Self.ms) == SaturationYield.short)
        y.idle()
        // Busy again: the 100 ms count from the first wait after the idle.
        #expect(y.wait(at: 110 * Self.ms) == SaturationYield.short)
        #expect(y.wait(at: 209 * Self.ms) == SaturationYield.short)
        #expect(y.wait(at: 210 * Self.ms) == SaturationYield.long)
        #expect(y.wait(at: 211 * Self.ms) == SaturationYield.short)
    }

    @Test func theLongWaitOutlastsTheShortOne() {
        #expect(SaturationYield.long > SaturationYield.short)
        #expect(SaturationYield.long.nanoseconds < Int64(SaturationYield.pollEveryNanos))
    }
}
