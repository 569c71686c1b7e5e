/// Numbers in ARI lines. Integers are decimal with an optional sign; values past the ends of
/// `Int` stop there (a remote's 25-digit buffer size means "very large", not a crash). Doubles
/// are read leniently, since each SDK writes its language's own text (`40.5`, `1e+20`, `inf`,
/// `1.0E20`, `Infinity`); their meaning is checked by whoever uses them.
enum ARINumbers {
    static func parseInt(_ token: Substring, type: String, limits: ARILimits) throws(ARIProtocolError) -> Int {
        let utf8 = token.utf8
        guard utf8.count <= limits.maxNumberLength else { throw .badValue(type: type, value: String(token)) }
        var digits = utf8[...]
        var negative = false
        if let first = digits.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { throw .badValue(type: type, value: String(token)) }
        var value = 0
        var saturated = false
        for b in digits {
            guard b >= 0x30 && b <= 0x39 else { throw .badValue(type: type, value: String(token)) }
            if saturated { continue }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(Int(b - 0x30))
            if o1 || o2 { saturated = true } else { value = s }
        }
        if saturated { return negative ? Int.min : Int.max }
        return negative ? -value : value
    }

    static func parseDouble(_ token: Substring, limits: ARILimits) throws(ARIProtocolError) -> Double {
        guard token.utf8.count <= limits.maxNumberLength,
            // No hexadecimal floats and no spaces: only what the SDKs' languages print.
            token.utf8.allSatisfy({ $0 != UInt8(ascii: "x") && $0 != UInt8(ascii: "X") && $0 > 0x20 }),
            let d = Double(String(token))
        else {
            throw .badValue(type: "D", value: String(token))
        }
        return d
    }

    /// A double as every SDK's parser reads it (Java and .NET want `Infinity` and `NaN`).
    static func format(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        return String(d)
    }
}
