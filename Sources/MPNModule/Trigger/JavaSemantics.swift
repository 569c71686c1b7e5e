/// The Java library behaviour trigger expressions rely on, re-implemented: number parsing
/// (with `NumberFormatException`), number-to-string conversion, casts and the `String` methods.
/// Thrown exceptions make the trigger evaluate to false (not triggered), as a trigger whose
/// evaluation throws does not fire.
enum JavaException: Error, Equatable, Sendable {
    case numberFormat
    case nullPointer
    case arithmetic
    case indexOutOfBounds
    /// A string grew over the evaluation budget.
    case outOfBudget
}

enum Java {
    /// The longest string (UTF-8 bytes) one evaluation may build by concatenation.
    static let maxStringBytes = 64 * 1024

    // MARK: Integer.parseInt / Long.parseLong

    static func parseLong(_ s: String?, min: Int64 = .min, max: Int64 = .max) throws(JavaException) -> Int64 {
        guard let s else { throw .numberFormat }
        var utf8 = s.utf8[...]
        guard let first = utf8.first else { throw .numberFormat }
        var negative = false
        if first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            utf8 = utf8.dropFirst()
        }
        guard !utf8.isEmpty else { throw .numberFormat }
        // Accumulate negatively so that MIN_VALUE parses.
        var value: Int64 = 0
        for b in utf8 {
            guard b >= 0x30, b <= 0x39 else { throw .numberFormat }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (r, o2) = m.subtractingReportingOverflow(Int64(b - 0x30))
            guard !o1, !o2 else { throw .numberFormat }
            value = r
        }
        if !negative {
            guard value != .min else { throw .numberFormat }
            value = -value
        }
        guard value >= min, value <= max else { throw .numberFormat }
        return value
    }

    static func parseInt(_ s: String?) throws(JavaException) -> Int32 {
        Int32(truncatingIfNeeded: try parseLong(s, min: Int64(Int32.min), max: Int64(Int32.max)))
    }

    // MARK: Double.parseDouble / Float.parseFloat

    /// Checks Java's decimal floating-point grammar after trimming (`NaN`, `Infinity`, digits
    /// with optional point and exponent, optional `f/F/d/D` suffix) and returns the text Swift
    /// converts with correct rounding. Hexadecimal floating literals are refused.
    private static func floatingText(_ s: String?) throws(JavaException) -> String {
        guard let s else { throw .nullPointer }
        let t = trim(s)
        var chars = Array(t.utf8)
        var out: [UInt8] = []
        var i = 0
        if let c = chars.first, c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
            out.append(c)
            i = 1
        }
        let rest = String(decoding: chars[i...], as: UTF8.self)
        if rest == "NaN" { return "nan" }
        if rest == "Infinity" { return String(decoding: out, as: UTF8.self) + "inf" }
        if let last = chars.last, "fFdD".utf8.contains(last), chars.count > i + 1 { chars.removeLast() }
        var mantissaDigits = 0
        while i < chars.count, chars[i] >= 0x30, chars[i] <= 0x39 {
            out.append(chars[i])
            i += 1
            mantissaDigits += 1
        }
        if i < chars.count, chars[i] == UInt8(ascii: ".") {
            out.append(chars[i])
            i += 1
            while i < chars.count, chars[i] >= 0x30, chars[i] <= 0x39 {
                out.append(chars[i])
                i += 1
                mantissaDigits += 1
            }
        }
        guard mantissaDigits > 0 else { throw .numberFormat }
        if i < chars.count, chars[i] == UInt8(ascii: "e") || chars[i] == UInt8(ascii: "E") {
            out.append(UInt8(ascii: "e"))
            i += 1
            if i < chars.count, chars[i] == UInt8(ascii: "+") || chars[i] == UInt8(ascii: "-") {
                out.append(chars[i])
                i += 1
            }
            var expDigits = 0
            while i < chars.count, chars[i] >= 0x30, chars[i] <= 0x39 {
                out.append(chars[i])
                i += 1
                expDigits += 1
            }
            guard expDigits > 0 else { throw .numberFormat }
        }
        guard i == chars.count else { throw .numberFormat }
        return String(decoding: out, as: UTF8.self)
    }

    static func parseDouble(_ s: String?) throws(JavaException) -> Double {
        let text = try floatingText(s)
        if let d = Double(text) { return d }
        // Swift refuses some huge exponents Java maps to infinity / zero.
        if text.contains("e-") { return text.hasPrefix("-") ? -0.0 : 0.0 }
        return text.hasPrefix("-") ? -.infinity : .infinity
    }

    static func parseFloat(_ s: String?) throws(JavaException) -> Float {
        let text = try floatingText(s)
        if let f = Float(text) { return f }
        if text.contains("e-") { return text.hasPrefix("-") ? -0.0 : 0.0 }
        return text.hasPrefix("-") ? -.infinity : .infinity
    }

    static func parseBoolean(_ s: String?) -> Bool {
        guard let s else { return false }
        return s.lowercased() == "true"
    }

    // MARK: Numbers to strings (Double.toString / Float.toString)

    static func toString(_ d: Double) -> String {
        formatFloating(
            isNaN: d.isNaN, isInfinite: d.isInfinite, sign: d.sign, isZero: d.isZero,
            magnitude: Double(d.magnitude).description)
    }

    static func toString(_ f: Float) -> String {
        formatFloating(
            isNaN: f.isNaN, isInfinite: f.isInfinite, sign: f.sign, isZero: f.isZero,
            magnitude: Float(f.magnitude).description)
    }

    /// Turns Swift's shortest round-trip digits into Java's layout: plain decimal for
    /// 10^-3 ≤ |x| < 10^7 (`100.0`, `0.001`), else `d.dddE±n` (`1.0E7`, `1.5E-5`).
    private static func formatFloating(
        isNaN: Bool, isInfinite: Bool, sign: FloatingPointSign, isZero: Bool,
        magnitude: String
    ) -> String {
        if isNaN { return "NaN" }
        let prefix = sign == .minus ? "-" : ""
        if isInfinite { return prefix + "Infinity" }
        if isZero { return prefix + "0.0" }
        // Parse "123.45", "1e-05", "1.5e+20" into digits and a decimal exponent.
        var mantissa = Substring(magnitude)
        var exponent = 0
        if let e = mantissa.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(mantissa[mantissa.index(after: e)...]) ?? 0
            mantissa = mantissa[..<e]
        }
        var intPart = mantissa
        var fracPart: Substring = ""
        if let dot = mantissa.firstIndex(of: ".") {
            intPart = mantissa[..<dot]
            fracPart = mantissa[mantissa.index(after: dot)...]
        }
        var digits = Array(intPart + fracPart)
        var pointPos = intPart.count + exponent // digits before the decimal point
        while digits.count > 1, digits.first == "0" {
            digits.removeFirst()
            pointPos -= 1
        }
        while digits.count > 1, digits.last == "0" { digits.removeLast() }
        let sciExponent = pointPos - 1
        if sciExponent >= -3 && sciExponent < 7 {
            var s = ""
            if pointPos <= 0 {
                s = "0." + String(repeating: "0", count: -pointPos) + String(digits)
            } else if pointPos >= digits.count {
                s = String(digits) + String(repeating: "0", count: pointPos - digits.count) + ".0"
            } else {
                s = String(digits[..<pointPos]) + "." + String(digits[pointPos...])
            }
            return prefix + s
        }
        let rest = digits.count > 1 ? String(digits[1...]) : "0"
        return prefix + String(digits[0]) + "." + rest + "E" + String(sciExponent)
    }

    // MARK: Casts (JLS 5.1.3)

    static func toInt(_ d: Double) -> Int32 {
        if d.isNaN { return 0 }
        if d >= Double(Int32.max) { return .max }
        if d <= Double(Int32.min) { return .min }
        return Int32(d.rounded(.towardZero))
    }

    static func toLong(_ d: Double) -> Int64 {
        if d.isNaN { return 0 }
        if d >= 9.223372036854775807e18 { return .max }
        if d <= -9.223372036854775808e18 { return .min }
        return Int64(d.rounded(.towardZero))
    }

    /// Math.round(double): floor(x + 0.5), saturated.
    static func round(_ d: Double) -> Int64 { toLong((d + 0.5).rounded(.down)) }
    /// Math.round(float).
    static func round(_ f: Float) -> Int32 { toInt(Double((f + 0.5).rounded(.down))) }

    // MARK: String methods (UTF-16 indices, as Java)

    /// String.trim(): removes leading and trailing characters ≤ U+0020.
    static func trim(_ s: String) -> String {
        let scalars = s.unicodeScalars
        guard let start = scalars.firstIndex(where: { $0.value > 0x20 }),
            let end = scalars.lastIndex(where: { $0.value > 0x20 })
        else { return "" }
        return String(scalars[start...end])
    }

    static func length(_ s: String) -> Int32 { Int32(clamping: s.utf16.count) }

    static func indexOf(_ s: String, _ sub: String) -> Int32 {
        let hay = Array(s.utf16), needle = Array(sub.utf16)
        if needle.isEmpty { return 0 }
        guard needle.count <= hay.count else { return -1 }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] {
            if Array(hay[i..<(i + needle.count)]) == needle { return Int32(i) }
        }
        return -1
    }

    static func lastIndexOf(_ s: String, _ sub: String) -> Int32 {
        let hay = Array(s.utf16), needle = Array(sub.utf16)
        guard needle.count <= hay.count else { return -1 }
        if needle.isEmpty { return Int32(hay.count) }
        for i in stride(from: hay.count - needle.count, through: 0, by: -1) where hay[i] == needle[0] {
            if Array(hay[i..<(i + needle.count)]) == needle { return Int32(i) }
        }
        return -1
    }

    static func substring(_ s: String, _ begin: Int32, _ end: Int32?) throws(JavaException) -> String {
        let units = Array(s.utf16)
        let e = end.map(Int.init) ?? units.count
        let b = Int(begin)
        guard b >= 0, e <= units.count, b <= e else { throw .indexOutOfBounds }
        return String(decoding: units[b..<e], as: UTF16.self)
    }

    /// String.compareTo: difference of the first differing UTF-16 units, else of the lengths.
    static func compare(_ a: String, _ b: String) -> Int32 {
        var ia = a.utf16.makeIterator(), ib = b.utf16.makeIterator()
        while true {
            switch (ia.next(), ib.next()) {
            case let (x?, y?): if x != y { return Int32(x) - Int32(y) }
            case (nil, nil): return 0
            default: return Int32(clamping: a.utf16.count - b.utf16.count)
            }
        }
    }

    static func equalsIgnoreCase(_ a: String, _ b: String?) -> Bool {
        guard let b else { return false }
        return a == b || a.uppercased() == b.uppercased() || a.lowercased() == b.lowercased()
    }

    static func concat(_ a: String, _ b: String) throws(JavaException) -> String {
        guard a.utf8.count + b.utf8.count <= maxStringBytes else { throw .outOfBudget }
        return a + b
    }
}
