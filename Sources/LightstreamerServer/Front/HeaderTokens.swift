import NIOHTTP1

/// The comma-separated tokens of HTTP header fields (RFC 9110 §5.6.1), read in place: no array
/// of values and no lowercased copies, as `HTTPHeaders[canonicalForm:]` makes. An upgrade
/// request reads two such fields (`Connection`, `Sec-WebSocket-Protocol`), and what it
/// allocates and frees between the objects a new session keeps is what leaves sessions opened
/// in bursts with more memory (BENCHMARKS.md, "Allocations of a session's creation").
enum HeaderTokens {
    /// Calls `body` with each non-empty token of every field named `name` (any case), spaces
    /// and tabs around it removed, in order, until `body` returns false.
    static func forEach(in headers: HTTPHeaders, named name: String, _ body: (Substring) -> Bool) {
        for (field, value) in headers where equalsIgnoringASCIICase(field, name) {
            var rest = Substring(value)
            while !rest.isEmpty {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                let token = trimmed(rest[..<end])
                if !token.isEmpty, !body(token) { return }
                rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            }
        }
    }

    /// Whether a field named `name` holds `token` (both compared in any ASCII case).
    static func contains(_ headers: HTTPHeaders, named name: String, token: String) -> Bool {
        var found = false
        forEach(in: headers, named: name) { t in
            found = equalsIgnoringASCIICase(t, token)
            return !found
        }
        return found
    }

    /// The tokens of the fields named `name`, as strings.
    static func list(_ headers: HTTPHeaders, named name: String) -> [String] {
        var tokens: [String] = []
        forEach(in: headers, named: name) { t in
            tokens.append(String(t))
            return true
        }
        return tokens
    }

    /// `s` without the spaces and tabs around it (optional whitespace, RFC 9110 §5.6.3).
    static func trimmed(_ s: Substring) -> Substring {
        var s = s
        while let f = s.utf8.first, f == UInt8(ascii: " ") || f == UInt8(ascii: "\t") { s = s.dropFirst() }
        while let l = s.utf8.last, l == UInt8(ascii: " ") || l == UInt8(ascii: "\t") { s = s.dropLast() }
        return s
    }

    static func equalsIgnoringASCIICase<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Bool {
        a.utf8.count == b.utf8.count
            && zip(a.utf8, b.utf8).allSatisfy { x, y in
                x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= UInt8(ascii: "a") && (x | 0x20) <= UInt8(ascii: "z"))
            }
    }
}
