/// A token bucket over the bytes of data notifications (`LS_requested_max_bandwidth`, CONS).
struct BandwidthLimiter: Sendable, Hashable {
    /// Bytes per second; nil is unlimited.
    private(set) var bytesPerSecond: Double?
    private var tokens: Double = 0
    private var lastRefill: Int64 = 0

    init() {}

    /// No limit: `consume` lets everything through and changes nothing.
    var isUnlimited: Bool { bytesPerSecond == nil }

    mutating func setLimit(kbps: Double?, now: Int64) {
        bytesPerSecond = kbps.map { max($0, 0.001) * 1000 / 8 }
        lastRefill = now
        tokens = min(tokens, capacity)
    }

    /// At most one second of traffic may go out in a burst.
    private var capacity: Double { max(bytesPerSecond ?? 0, 1) }

    private mutating func refill(now: Int64) {
        guard let rate = bytesPerSecond else { return }
        let elapsed = Double(max(now - lastRefill, 0)) / 1000
        tokens = min(capacity, tokens + elapsed * rate)
        lastRefill = now
    }

    /// Takes `bytes` if allowed now; otherwise returns the time at which to try again.
    mutating func consume(_ bytes: Int, now: Int64) -> Int64? {
        guard let rate = bytesPerSecond else { return nil }
        refill(now: now)
        // A line larger than the bucket may go out when the bucket is full (then it runs into debt).
        let needed = min(Double(bytes), capacity)
        if tokens >= needed {
            tokens -= Double(bytes)
            return nil
        }
        let wait = (needed - tokens) / rate * 1000
        return Saturating.add(now, Saturating.int64(wait.rounded(.up), in: 1...86_400_000))
    }
}
