/// One `|`-separated token of a `U` line (docs/protocol/TLCP.md §1.6).
public enum FieldDelta: Sendable, Hashable {
    /// Empty token: this field is unchanged.
    case unchanged
    /// `^N`: this field and the next N-1 are unchanged.
    case unchangedRun(Int)
    /// `#`: null.
    case null
    /// Actual content (`$` on the wire when empty).
    case value(String)
    /// `^P<json>`: an RFC 6902 JSON Patch to apply to the previous value (decoded text).
    case jsonPatch(String)
    /// `^T<diff>`: a TLCP-diff to apply to the previous value (decoded text).
    case tlcpDiff(String)

    /// How many fields the token covers.
    public var width: Int {
        if case .unchangedRun(let n) = self { return n }
        return 1
    }

    /// Appends the encoded tokens, `|`-separated.
    static func append(_ deltas: [FieldDelta], to out: inout [UInt8]) {
        for (i, d) in deltas.enumerated() {
            if i > 0 { out.append(UInt8(ascii: "|")) }
            d.append(to: &out)
        }
    }

    /// The token as it appears on the wire.
    public var encoded: String {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    func append(to out: inout [UInt8]) {
        switch self {
        case .unchanged: break
        case .unchangedRun(let n):
            out.append(UInt8(ascii: "^"))
            appendDecimal(n, to: &out)
        case .null: out.append(UInt8(ascii: "#"))
        case .value(let v):
            if v.isEmpty { out.append(UInt8(ascii: "$")) } else { Self.appendEscaped(v, leadingSpecials: true, to: &out) }
        case .jsonPatch(let p):
            out.append(UInt8(ascii: "^"))
            out.append(UInt8(ascii: "P"))
            Self.appendEscaped(p, leadingSpecials: false, to: &out)
        case .tlcpDiff(let d):
            out.append(UInt8(ascii: "^"))
            out.append(UInt8(ascii: "T"))
            Self.appendEscaped(d, leadingSpecials: false, to: &out)
        }
    }

    /// Field content rules of docs/protocol/TLCP.md §1.6: `|`, `%` and control characters anywhere,
    /// and `#`, `$`, `^` in first position, become `%XX`.
    static func appendEscaped(_ text: String, leadingSpecials: Bool, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            for (i, b) in bytes.enumerated() {
                if isEscaped(b, first: i == 0, leadingSpecials: leadingSpecials) {
                    out.append(UInt8(ascii: "%"))
                    out.append(PercentEncoding.hexDigit(b >> 4))
                    out.append(PercentEncoding.hexDigit(b & 0xF))
                } else {
                    out.append(b)
                }
            }
        }
    }

    /// Bytes `text` takes once escaped (see `appendEscaped`).
    static func escapedLength(_ text: String, leadingSpecials: Bool) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            var n = bytes.count
            for (i, b) in bytes.enumerated() where isEscaped(b, first: i == 0, leadingSpecials: leadingSpecials) { n += 2 }
            return n
        }
    }

    /// Whether `appendEscaped` writes `b` as `%XX`.
    @inline(__always)
    static func isEscaped(_ b: UInt8, first: Bool, leadingSpecials: Bool) -> Bool {
        PercentEncoding.isFieldSpecial(b)
            || (leadingSpecials && first && (b == UInt8(ascii: "#") || b == UInt8(ascii: "$") || b == UInt8(ascii: "^")))
    }

    /// Parses the third argument of `U` into tokens.
    public static func parseValues(_ text: Substring) throws(TLCPLineError) -> [FieldDelta] {
        try text.withUTF8Bytes { parseValues($0) }.get()
    }

    static func parseValues(_ bytes: Bytes) -> Result<[FieldDelta], TLCPLineError> {
        var result: [FieldDelta] = []
        result.reserveCapacity(16)
        var start = 0
        var i = 0
        let n = bytes.count
        while true {
            if i == n || bytes[i] == UInt8(ascii: "|") {
                switch parseToken(bytes.slice(start, i)) {
                case .success(let token): result.append(token)
                case .failure(let error): return .failure(error)
                }
                if i == n { break }
                i += 1
                start = i
            } else {
                i += 1
            }
        }
        return .success(result)
    }

    static func parseToken(_ token: Bytes) -> Result<FieldDelta, TLCPLineError> {
        guard let first = token.first else { return .success(.unchanged) }
        switch first {
        case UInt8(ascii: "#") where token.count == 1: return .success(.null)
        case UInt8(ascii: "$") where token.count == 1: return .success(.value(""))
        case UInt8(ascii: "^"):
            guard token.count >= 2 else { return .failure(TLCPLineError("Empty ^ token in update")) }
            let kind = token[1]
            if kind == UInt8(ascii: "P") {
                return decode(token.slice(2, token.count)).map { .jsonPatch($0) }
            }
            if kind == UInt8(ascii: "T") {
                return decode(token.slice(2, token.count)).map { .tlcpDiff($0) }
            }
            var n = 0
            for b in token.slice(1, token.count) {
                guard b >= 0x30 && b <= 0x39, n < 1_000_000_000 else {
                    return .failure(TLCPLineError("Bad token '\(String(validUTF8: token).prefix(20))' in update"))
                }
                n = n * 10 + Int(b - 0x30)
            }
            guard n > 0 else { return .failure(TLCPLineError("Bad token '^0' in update")) }
            return .success(.unchangedRun(n))
        default:
            return decode(token).map { .value($0) }
        }
    }

    private static func decode(_ bytes: Bytes) -> Result<String, TLCPLineError> {
        PercentEncoding.decode(bytes, plusAsSpace: false).mapError { TLCPLineError("Bad field value in update: \($0)") }
    }
}
