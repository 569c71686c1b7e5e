import Foundation

/// A streaming JSON writer: values are appended as UTF-8 bytes to a reusable buffer, with no
/// intermediate objects (the `--json` output of `subscribe` and `session` runs through it for
/// every update).
///
/// Strings are escaped as RFC 8259 §7 requires and as `JSONSerialization` did before (the
/// output is byte-for-byte the same): `"` and `\` get a backslash, U+0008/0009/000A/000C/000D
/// become `\b \t \n \f \r`, the other control characters below U+0020 become `\u00XX`
/// (lower-case hex), and everything else, `/` and U+007F included, is copied as UTF-8.
struct JSONWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func null() { raw("null") }

    mutating func bool(_ b: Bool) { if b { raw("true") } else { raw("false") } }

    mutating func int<T: BinaryInteger>(_ v: T) {
        if v >= 0 && v < 10 {
            bytes.append(0x30 &+ UInt8(v))
            return
        }
        // Digits of the magnitude, least significant first, into a small stack buffer.
        var m = v.magnitude
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 40) { tmp in
            var n = 0
            repeat {
                let (q, r) = m.quotientAndRemainder(dividingBy: 10)
                tmp[n] = 0x30 &+ UInt8(r)
                n += 1
                m = q
            } while m != 0
            while n > 0 {
                n -= 1
                bytes.append(tmp[n])
            }
        }
    }

    /// A double as `JSONSerialization` wrote it for the values this CLI prints: integral values
    /// without a fraction, others in Swift's shortest round-trip form. Not finite: `null`.
    mutating func double(_ v: Double) {
        guard v.isFinite else { return null() }
        if v == v.rounded(), abs(v) < 1e15 { return int(Int64(v)) }
        bytes.append(contentsOf: String(v).utf8)
    }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { string(utf8: $0) }
    }

    mutating func string(_ s: Substring) {
        var s = s
        s.withUTF8 { string(utf8: $0) }
    }

    /// A string from its UTF-8 bytes (already valid UTF-8: Swift strings are).
    mutating func string(utf8 p: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        var i = 0
        let n = p.count
        while i < n {
            let b = p[i]
            if b >= 0x20 && b != 0x22 && b != 0x5C {
                i += 1
                continue
            }
            if runStart < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<i])) }
            escape(b)
            i += 1
            runStart = i
        }
        if runStart < n { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<n])) }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ b: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch b {
        case 0x22: bytes.append(0x22)
        case 0x5C: bytes.append(0x5C)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
            let hex: StaticString = "0123456789abcdef"
            raw("u00")
            hex.withUTF8Buffer { h in
                bytes.append(h[Int(b >> 4)])
                bytes.append(h[Int(b & 0xF)])
            }
        }
    }

    mutating func string(_ s: String?) {
        if let s { string(s) } else { null() }
    }

    /// `"key":`
    mutating func key(_ k: String) {
        string(k)
        bytes.append(UInt8(ascii: ":"))
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
        bytes.append(UInt8(ascii: "["))
        for (i, e) in a.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            value(e)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func object(_ d: [String: Any?]) {
        bytes.append(UInt8(ascii: "{"))
        for (i, k) in JSONKeyOrder.sorted(d.keys).enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            key(k)
            value(d[k] ?? nil)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

/// The key order of `JSONSerialization`'s `.sortedKeys` on this platform: numeric,
/// case-insensitive, in the system locale, ties broken by a forced ordering (`"_x"` before
/// `"9"` before `"10"`, `"a"` before `"A"` before `"b"`).
enum JSONKeyOrder {
    /// The system locale (`NSLocale.system`), as `JSONSerialization` uses.
    private static let locale = Locale(identifier: "")

    static func less(_ a: String, _ b: String) -> Bool {
        a.compare(b, options: [.numeric, .caseInsensitive, .forcedOrdering], range: a.startIndex..<a.endIndex,
                  locale: locale) == .orderedAscending
    }

    static func sorted<S: Sequence>(_ keys: S) -> [String] where S.Element == String {
        keys.sorted(by: less)
    }
}
