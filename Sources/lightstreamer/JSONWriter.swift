import Foundation

/// A streaming JSON writer: values are appended as UTF-8 bytes to a reusable buffer (its own
/// memory, grown when needed, never shrunk; not copyable), with no intermediate objects (the `--json` output of `subscribe` and `session` runs through it for
/// every update).
///
/// Strings are escaped as RFC 8259 §7 requires and as `JSONSerialization` did before (the
/// output is byte-for-byte the same): `"` and `\` get a backslash, U+0008/0009/000A/000C/000D
/// become `\b \t \n \f \r`, the other control characters below U+0020 become `\u00XX`
/// (lower-case hex), and everything else, `/` and U+007F included, is copied as UTF-8.
struct JSONWriter: ~Copyable {
    /// The bytes written so far: `base[0..<count]`.
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// A copy of the bytes written (tests).
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: base, count: count))
    }

    /// Forgets the bytes written, keeps the memory.
    mutating func removeAll() { count = 0 }

    @inline(__always)
    private mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(count + n) }
    }

    private mutating func grow(_ needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func byte(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count += 1
    }

    mutating func append(_ p: UnsafeBufferPointer<UInt8>) {
        guard let from = p.baseAddress, p.count > 0 else { return }
        reserve(p.count)
        (base + count).update(from: from, count: p.count)
        count += p.count
    }

    /// Raw UTF-8 of `s`, not quoted or escaped.
    mutating func append(_ s: String) {
        var s = s
        s.withUTF8 { append($0) }
    }

    mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { append($0) }
    }

    mutating func null() { raw("null") }

    mutating func bool(_ b: Bool) { if b { raw("true") } else { raw("false") } }

    mutating func int<T: BinaryInteger>(_ v: T) {
        if v >= 0 && v < 10 {
            byte(0x30 &+ UInt8(v))
            return
        }
        // Digits of the magnitude, least significant first, then reversed in place.
        var m = v.magnitude
        reserve(41)
        if v < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        let start = count
        repeat {
            let (q, r) = m.quotientAndRemainder(dividingBy: 10)
            base[count] = 0x30 &+ UInt8(r)
            count += 1
            m = q
        } while m != 0
        var lo = start, hi = count - 1
        while lo < hi {
            let t = base[lo]
            base[lo] = base[hi]
            base[hi] = t
            lo += 1
            hi -= 1
        }
    }

    /// A double as `JSONSerialization` wrote it for the values this CLI prints: integral values
    /// without a fraction, others in Swift's shortest round-trip form. Not finite: `null`.
    mutating func double(_ v: Double) {
        guard v.isFinite else { return null() }
        if v == v.rounded(), abs(v) < 1e15 { return int(Int64(v)) }
        append(String(v))
    }

    mutating func string(_ s: String) {
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ string(utf8: $0) }) { return done }
        var s = s
        s.withUTF8 { string(utf8: $0) }
    }

    /// A string from its UTF-8 bytes (already valid UTF-8: Swift strings are).
    mutating func string(utf8 p: UnsafeBufferPointer<UInt8>) {
        writing(upTo: Self.stringBound(p.count)) { Self.writeString(p, at: $0) }
    }

    /// Reserves room for `n` bytes and lets `body` write up to that many after the bytes
    /// written so far; `body` returns how many it wrote.
    @inline(__always)
    mutating func writing(upTo n: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        reserve(n)
        count += body(base + count)
    }

    /// The most bytes `writeString` writes for `n` bytes of text (`\u00XX` is 6 per byte).
    @inline(__always)
    static func stringBound(_ n: Int) -> Int { 2 + 6 * n }

    /// Writes the UTF-8 text `p` as a quoted JSON string at `o`, which must have room for
    /// `stringBound(p.count)` bytes, and returns the bytes written.
    @inline(__always)
    static func writeString(_ p: UnsafeBufferPointer<UInt8>, at o: UnsafeMutablePointer<UInt8>) -> Int {
        o[0] = UInt8(ascii: "\"")
        var k = 1
        for b in p {
            guard b < 0x20 || b == 0x22 || b == 0x5C else {
                o[k] = b
                k += 1
                continue
            }
            o[k] = UInt8(ascii: "\\")
            switch b {
            case 0x22, 0x5C: o[k + 1] = b
            case 0x08: o[k + 1] = UInt8(ascii: "b")
            case 0x09: o[k + 1] = UInt8(ascii: "t")
            case 0x0A: o[k + 1] = UInt8(ascii: "n")
            case 0x0C: o[k + 1] = UInt8(ascii: "f")
            case 0x0D: o[k + 1] = UInt8(ascii: "r")
            default:
                // Other control characters: \u00XX, lower-case hex.
                let hi = b >> 4, lo = b & 0xF
                o[k + 1] = UInt8(ascii: "u")
                o[k + 2] = UInt8(ascii: "0")
                o[k + 3] = UInt8(ascii: "0")
                o[k + 4] = hi < 10 ? 0x30 + hi : 0x61 + hi - 10
                o[k + 5] = lo < 10 ? 0x30 + lo : 0x61 + lo - 10
                k += 6
                continue
            }
            k += 2
        }
        o[k] = UInt8(ascii: "\"")
        return k + 1
    }

    mutating func string(_ s: String?) {
        if let s { string(s) } else { null() }
    }

    /// `"key":`
    mutating func key(_ k: String) {
        string(k)
        byte(UInt8(ascii: ":"))
    }

    /// Any value a `[String: Any?]` event may hold: nil/NSNull, String, Bool, integers, Double,
    /// arrays and dictionaries (keys sorted as `JSONSerialization`'s `.sortedKeys` sorts them).
    /// For the occasional events; updates have their own path (`UpdateJSON`).
    mutating func value(_ v: Any?) {
        guard let v = Self.unwrapped(v) else { return null() }
        switch v {
        case is NSNull: null()
        case let s as String: string(s)
        case let b as Bool: bool(b)
        case let i as Int: int(i)
        case let i as Int64: int(i)
        case let i as Int32: int(i)
        case let i as UInt: int(i)
        case let i as UInt64: int(i)
        case let d as Double: double(d)
        case let f as Float: double(Double(f))
        case let a as [Any?]: array(a)
        case let a as [Any]: array(a.map { Optional($0) })
        case let d as [String: Any?]: object(d)
        case let d as [String: Any]: object(d.mapValues { Optional($0) })
        default: string(String(describing: v))
        }
    }

    /// The value inside any number of optionals (an `Any` may hold a `String?`), nil for none.
    private static func unwrapped(_ v: Any?) -> Any? {
        guard let v else { return nil }
        let m = Mirror(reflecting: v)
        guard m.displayStyle == .optional else { return v }
        guard let inner = m.children.first else { return nil }
        return unwrapped(inner.value)
    }

    mutating func array(_ a: [Any?]) {
        byte(UInt8(ascii: "["))
        for (i, e) in a.enumerated() {
            if i > 0 { byte(UInt8(ascii: ",")) }
            value(e)
        }
        byte(UInt8(ascii: "]"))
    }

    mutating func object(_ d: [String: Any?]) {
        byte(UInt8(ascii: "{"))
        for (i, k) in JSONKeyOrder.sorted(d.keys).enumerated() {
            if i > 0 { byte(UInt8(ascii: ",")) }
            key(k)
            value(d[k] ?? nil)
        }
        byte(UInt8(ascii: "}"))
    }
}

/// The key order of `JSONSerialization`'s `.sortedKeys` on this platform: numeric,
/// case-insensitive, in the system locale, ties broken by a forced ordering (`"_x"` before
/// `"9"` before `"10"`, `"a"` before `"A"` before `"b"`).
enum JSONKeyOrder {
    /// The system locale (`NSLocale.system`), as `JSONSerialization` uses.
    private static let locale = Locale(identifier: "")

    static func less(_ a: String, _ b: String) -> Bool {
        a.compare(
            b, options: [.numeric, .caseInsensitive, .forcedOrdering], range: a.startIndex..<a.endIndex,
            locale: locale) == .orderedAscending
    }

    static func sorted<S: Sequence>(_ keys: S) -> [String] where S.Element == String {
        keys.sorted(by: less)
    }
}
