import TLCP
import Testing

@Suite struct SaturatingTests {
    @Test func additionStopsAtTheEnds() {
        #expect(Saturating.add(Int64.max - 1, 5) == .max)
        #expect(Saturating.add(Int64.min + 1, -5) == .min)
        #expect(Saturating.add(Int64(40), 2) == 42)
        #expect(Saturating.subtract(Int64.min, 1) == .min)
        #expect(Saturating.subtract(Int64.max, -1) == .max)
        #expect(Saturating.add(Int.max, 1) == .max)
    }

    @Test func multiplicationKeepsTheSign() {
        #expect(Saturating.multiply(Int64.max / 2, 3) == .max)
        #expect(Saturating.multiply(Int64.max / 2, -3) == .min)
        #expect(Saturating.multiply(Int64.min, -1) == .max)
        #expect(Saturating.multiply(Int64(-7), 6) == -42)
    }

    @Test func timeConversionsOfHostileValues() {
        // The value that once killed the server through NIODeadline.
        #expect(Saturating.nanoseconds(millis: 99_999_999_999_999) == .max)
        #expect(Saturating.nanoseconds(millis: 999_999_999_999_999_999) == .max)
        #expect(Saturating.nanoseconds(millis: 1_500) == 1_500_000_000)
        #expect(Saturating.nanoseconds(seconds: Int64.max / 10) == .max)
        #expect(Saturating.uptimeNanoseconds(millis: -5) == 0)
        #expect(Saturating.uptimeNanoseconds(millis: .max) == UInt64(Int64.max))
        #expect(Saturating.deadline(Int64.max - 10, plus: 1_000) == .max)
    }

    @Test func doublesNeverTrap() {
        #expect(Saturating.int64(.nan) == 0)
        #expect(Saturating.int64(.infinity) == .max)
        #expect(Saturating.int64(-.infinity) == .min)
        #expect(Saturating.int64(1e300, in: 0...1_000) == 1_000)
        #expect(Saturating.int64(-3.7, in: 0...1_000) == 0)
        #expect(Saturating.int64(12.9) == 12)
        #expect(Saturating.int(.nan, in: 5...9, nan: 7) == 7)
        #expect(Saturating.int(9.3e18) == .max) // past Int64.max (about 9.22e18)
        #expect(Saturating.int(9.2e18) == 9_200_000_000_000_000_000)
    }

    @Test func secondsFromText() {
        #expect(Saturating.seconds("120", in: 0...3_600) == 120)
        #expect(Saturating.seconds(" 7 ", in: 0...3_600) == 7)
        #expect(Saturating.seconds("99999999999999999999999", in: 0...3_600) == 3_600)
        #expect(Saturating.seconds("5", in: 10...3_600) == 10)
        #expect(Saturating.seconds("-1", in: 0...3_600) == nil)
        #expect(Saturating.seconds("1.5", in: 0...3_600) == nil)
        #expect(Saturating.seconds("Wed, 21 Oct 2015 07:28:00 GMT", in: 0...3_600) == nil)
        #expect(Saturating.seconds("", in: 0...3_600) == nil)
        #expect(Saturating.seconds("12345678901234567890x", in: 0...3_600) == nil)
    }
}
