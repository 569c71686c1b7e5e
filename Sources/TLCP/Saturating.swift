/// Arithmetic on numbers that come from outside (a request parameter, a notification, an
/// adapter value, a provider's answer) and on the times computed from them. Nothing here traps:
/// results past the ends of `Int64` stop at the end, and NaN or infinite doubles have a defined
/// result. Every conversion of an outside number into a time, a deadline or a count goes
/// through these functions (docs/RELIABILITY.md, "Numbers from clients", "Numbers from
/// providers and from the configuration" and "Numbers from a server").
public enum Saturating {
    /// `a + b`, stopping at `Int64.min` / `Int64.max`.
    @inlinable
    public static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : r
    }

    /// `a + b` on `Int`, stopping at `Int.min` / `Int.max`.
    @inlinable
    public static func add(_ a: Int, _ b: Int) -> Int {
        let (r, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : r
    }

    /// `a - b`, stopping at the ends.
    @inlinable
    public static func subtract(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? (b < 0 ? .max : .min) : r
    }

    /// `a * b`, stopping at the ends.
    @inlinable
    public static func multiply(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? ((a < 0) == (b < 0) ? .max : .min) : r
    }

    /// `a * b` on `Int`, stopping at the ends.
    @inlinable
    public static func multiply(_ a: Int, _ b: Int) -> Int {
        let (r, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? ((a < 0) == (b < 0) ? .max : .min) : r
    }

    /// Nanoseconds in `millis` milliseconds.
    @inlinable
    public static func nanoseconds(millis: Int64) -> Int64 { multiply(millis, 1_000_000) }

    /// Nanoseconds in `seconds` seconds.
    @inlinable
    public static func nanoseconds(seconds: Int64) -> Int64 { multiply(seconds, 1_000_000_000) }

    /// Milliseconds in `seconds` seconds.
    @inlinable
    public static func millis(seconds: Int64) -> Int64 { multiply(seconds, 1_000) }

    /// A time `delayMillis` after `nowMillis` (both on one clock).
    @inlinable
    public static func deadline(_ nowMillis: Int64, plus delayMillis: Int) -> Int64 {
        add(nowMillis, Int64(delayMillis))
    }

    /// A point on a monotonic nanosecond clock (`NIODeadline.uptimeNanoseconds`, `DispatchTime`):
    /// `millis` milliseconds from the clock's origin, negative times taken as the origin.
    @inlinable
    public static func uptimeNanoseconds(millis: Int64) -> UInt64 {
        UInt64(nanoseconds(millis: max(millis, 0)))
    }

    /// `value` within `range`.
    @inlinable
    public static func clamp<T: Comparable>(_ value: T, to range: ClosedRange<T>) -> T {
        min(max(value, range.lowerBound), range.upperBound)
    }

    /// The nearest `Int64` to `value` within `range`; NaN gives `nan`.
    @inlinable
    public static func int64(
        _ value: Double, in range: ClosedRange<Int64> = Int64.min...Int64.max,
        nan: Int64 = 0
    ) -> Int64 {
        guard !value.isNaN else { return clamp(nan, to: range) }
        // Compare as doubles first: `Int64(value)` traps outside ±2^63.
        if value <= Double(range.lowerBound) { return range.lowerBound }
        if value >= Double(range.upperBound) { return range.upperBound }
        return clamp(Int64(value), to: range)
    }

    /// The nearest `Int` to `value` within `range`; NaN gives `nan`.
    @inlinable
    public static func int(_ value: Double, in range: ClosedRange<Int> = Int.min...Int.max, nan: Int = 0) -> Int {
        Int(int64(value, in: Int64(range.lowerBound)...Int64(range.upperBound), nan: Int64(nan)))
    }

    /// A decimal count of seconds (an HTTP `Retry-After`, a token's `expires_in`): ASCII digits
    /// only, at most 18 of them, within `range`. Anything else (a date, a sign, a fraction,
    /// spaces, an empty text) is nil.
    public static func seconds(_ text: some StringProtocol, in range: ClosedRange<Int64>) -> Int64? {
        var t = Substring(text)
        while let f = t.first, f == " " || f == "\t" { t = t.dropFirst() }
        while let l = t.last, l == " " || l == "\t" { t = t.dropLast() }
        guard !t.isEmpty, t.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        // Past 18 digits the value is above any range this is used with: stop at the top.
        guard t.utf8.count <= 18 else { return range.upperBound }
        var v: Int64 = 0
        for b in t.utf8 { v = v * 10 + Int64(b - 0x30) }
        return clamp(v, to: range)
    }
}
