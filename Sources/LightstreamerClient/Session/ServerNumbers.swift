import TLCP

/// The ranges the client holds numbers from server lines to before it turns them into times,
/// counts or sizes (docs/RELIABILITY.md, "Numbers from a server"). A line parses only with at
/// most 18 digits, so every value below fits an `Int`; these bounds keep the arithmetic made from
/// them (`* 1000`, deadlines, allocations) far from overflow and from absurd waits, always
/// through `Saturating`.
///
/// | Value | Range | Outside it |
/// |---|---|---|
/// | `CONOK` keep-alive (stream) / idle time (poll), ms | 0 … 86,400,000 (one day) | nearest end |
/// | `CONOK` request limit, bytes | 1 … 1,073,741,824 (1 GiB); 0 or less: 50,000 | nearest end |
/// | `LOOP` delay, ms | 0 … 86,400,000 | nearest end |
/// | `SYNC` seconds | 0 … 31,536,000 (a year) | nearest end |
/// | `CONS` bandwidth, kbit/s | 0 … 1,000,000,000 | nearest end |
/// | `PROG` | 0 … data notifications received | a mismatch: new session |
/// | `MSGFAIL` code 39 count | 1 … 1,000,000,000 | nearest end |
/// | `SUBOK`/`SUBCMD` items | 1 … 100,000 | subscription error 61 |
/// | `SUBOK`/`SUBCMD` fields | 1 … 10,000 | subscription error 61 |
/// | `SUBCMD` key and command positions | 1 … fields | subscription error 61 |
/// | `U` item position | 1 … items | subscription error 61 |
/// | any timer the engine arms, ms | 0 … 86,400,000 | nearest end |
enum ServerNumbers {
    /// Keep-alive, idle time, LOOP delay and every timer: at most a day.
    static let millis: ClosedRange<Int> = 0...86_400_000
    /// Request limit in bytes.
    static let requestLimit: ClosedRange<Int> = 1...1_073_741_824
    /// The request limit when CONOK gives none (0 or less).
    static let defaultRequestLimit = 50_000
    /// SYNC seconds since the bind.
    static let syncSeconds: ClosedRange<Int64> = 0...31_536_000
    /// CONS bandwidth in kbit/s.
    static let bandwidthKbps: ClosedRange<Double> = 0...1_000_000_000
    /// MSGFAIL 39: how many progressives were skipped.
    static let skippedMessages: ClosedRange<Int> = 1...1_000_000_000
    /// SUBOK/SUBCMD item count: no more item slots are allocated than this.
    static let items: ClosedRange<Int> = 1...100_000
    /// SUBOK/SUBCMD field count.
    static let fields: ClosedRange<Int> = 1...10_000

    static func millis(_ v: Int) -> Int { Saturating.clamp(v, to: millis) }

    static func requestLimit(_ v: Int) -> Int { v <= 0 ? defaultRequestLimit : Saturating.clamp(v, to: requestLimit) }

    /// Milliseconds in a SYNC value.
    static func syncMillis(_ seconds: Int) -> Int64 {
        Saturating.millis(seconds: Saturating.clamp(Int64(seconds), to: syncSeconds))
    }

    static func bandwidth(_ kbps: Double) -> Double {
        kbps.isNaN ? 0 : Saturating.clamp(kbps, to: bandwidthKbps)
    }
}
