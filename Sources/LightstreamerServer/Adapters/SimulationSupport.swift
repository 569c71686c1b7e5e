/// Helpers shared by the simulated adapters: a seedable random generator and number text.

/// SplitMix64: small, fast, and reproducible from a seed (tests and load runs repeat exactly).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// A generator for one named thing, derived from a seed and the name (stable across runs,
    /// unlike `Hasher`).
    public init(seed: UInt64, name: String) {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in name.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        state = seed ^ h
    }

    /// The next pseudo-random number.
    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// `value` with exactly `decimals` digits after the dot (no exponent): `12.5` → `"12.50"`.
func fixedDecimal(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return "0" }
    let digits = min(max(0, decimals), 9)
    var scale: Int64 = 1
    for _ in 0..<digits { scale *= 10 }
    let limit = Double(Int64.max / 4)
    let scaled = (value * Double(scale)).rounded()
    guard abs(scaled) < limit else { return "0" }
    let n = Int64(scaled)
    let negative = n < 0
    let magnitude = negative ? -n : n
    let whole = magnitude / scale
    var text = (negative ? "-" : "") + String(whole)
    if digits > 0 {
        let fraction = String(magnitude % scale)
        text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
    return text
}

/// Two-digit zero padding for clock fields.
func twoDigits(_ n: Int) -> String {
    n < 10 ? "0\(n)" : String(n)
}

/// `HH:mm:ss` (UTC) for a number of seconds since the Unix epoch.
func clockText(secondsSinceEpoch: Int) -> String {
    let s = ((secondsSinceEpoch % 86_400) + 86_400) % 86_400
    return "\(twoDigits(s / 3600)):\(twoDigits(s / 60 % 60)):\(twoDigits(s % 60))"
}
