/// One `|`-separated token of a `U` line (section 1.6).
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
    static func append(_ deltas: [FieldDelta], to out: inout String) {
        for (i, d) in deltas.enumerated() {
            if i > 0 { out.append("|") }
            d.append(to: &out)
        }
    }

    /// The token as it appears on the wire.
    public var encoded: String {
        var s = ""
        append(to: &s)
        return s
    }

    func append(to out: inout String) {
        switch self {
        case .unchanged: break
        case .unchangedRun(let n): out.append("^"); out.append(String(n))
        case .null: out.append("#")
        case .value(let v): out.append(v.isEmpty ? "$" : PercentEncoding.encodeFieldValue(v))
        case .jsonPatch(let p): out.append("^P"); out.append(PercentEncoding.encode(p, PercentEncoding.isFieldSpecial))
        case .tlcpDiff(let d): out.append("^T"); out.append(PercentEncoding.encode(d, PercentEncoding.isFieldSpecial))
        }
    }

    /// Parses the third argument of `U` into tokens.
    public static func parseValues(_ text: Substring) throws(TLCPLineError) -> [FieldDelta] {
        var result: [FieldDelta] = []
        let utf8 = text.utf8
        var start = utf8.startIndex
        var i = start
        while true {
            if i == utf8.endIndex || utf8[i] == UInt8(ascii: "|") {
                result.append(try parseToken(Substring(utf8[start..<i])))
                if i == utf8.endIndex { break }
                i = utf8.index(after: i)
                start = i
            } else {
                i = utf8.index(after: i)
            }
        }
        return result
    }

    static func parseToken(_ token: Substring) throws(TLCPLineError) -> FieldDelta {
        guard let first = token.utf8.first else { return .unchanged }
        switch first {
        case UInt8(ascii: "#") where token.utf8.count == 1: return .null
        case UInt8(ascii: "$") where token.utf8.count == 1: return .value("")
        case UInt8(ascii: "^"):
            // Byte offsets, not Characters: a combining mark would fuse with the marker.
            let rest = Substring(token.utf8.dropFirst())
            guard let kind = rest.utf8.first else { throw TLCPLineError("Empty ^ token in update") }
            if kind == UInt8(ascii: "P") {
                return .jsonPatch(try decode(Substring(rest.utf8.dropFirst())))
            }
            if kind == UInt8(ascii: "T") {
                return .tlcpDiff(try decode(Substring(rest.utf8.dropFirst())))
            }
            guard let n = Int(decimalDigits: rest), n > 0 else {
                throw TLCPLineError("Bad token '^\(rest.prefix(20))' in update")
            }
            return .unchangedRun(n)
        default:
            return .value(try decode(token))
        }
    }

    private static func decode(_ s: Substring) throws(TLCPLineError) -> String {
        do {
            return try PercentEncoding.decode(s.utf8, plusAsSpace: false)
        } catch {
            throw TLCPLineError("Bad field value in update: \(error)")
        }
    }
}
