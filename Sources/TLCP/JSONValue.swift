/// A small JSON model for `^P` field values: objects keep their key order and numbers keep
/// their text, so that a value survives parse → serialize unchanged when it was compact.
public indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number's text as written (validated JSON number syntax).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var offset: Int
        public var description: String { "JSON: \(message) at byte \(offset)" }
    }

    /// Deepest nesting `parse` accepts by default, in levels of arrays and objects (protects the
    /// stack against hostile input such as `[[[[…`).
    public static let maxDepth = 256

    /// Parses a complete JSON text whose arrays and objects are nested at most `maxDepth` levels
    /// (`[]` is one level, `[[]]` two); deeper text is a `ParseError`, found before the parser
    /// recurses any further.
    public static func parse(_ text: String, maxDepth: Int = JSONValue.maxDepth) throws(ParseError) -> JSONValue {
        var p = JSONParser(bytes: Array(text.utf8), maxDepth: maxDepth)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        guard p.pos == p.bytes.count else { throw ParseError(message: "trailing characters", offset: p.pos) }
        return v
    }

    /// Compact serialization: no spaces, keys in order, numbers as written, strings with the
    /// minimal escapes.
    public var serialized: String {
        // Written as bytes, and made a string once: appending to a `String` piece by piece
        // (and scalar by scalar in strings) cost about half of encoding a `^P` field
        // (Benchmarks/tlcp-callgrind.sh, `encode-patch`).
        var out: [UInt8] = []
        out.reserveCapacity(64)
        serialize(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func serialize(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.utf8)
        case .string(let s): JSONValue.appendQuoted(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, v) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                v.serialize(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.appendQuoted(m.key, to: &out)
                out.append(UInt8(ascii: ":"))
                m.value.serialize(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `s` as a JSON string (RFC 8259 §7): `"` and `\` escaped, the control characters as
    /// their short escapes or `\u00xx`, every other character as its UTF-8 bytes.
    static func appendQuoted(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            for b in bytes {
                switch b {
                case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
                case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
                case 0..<0x20:
                    out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    out.append(lowerHexDigit(b >> 4))
                    out.append(lowerHexDigit(b & 0xF))
                default: out.append(b)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    static func lowerHexDigit(_ v: UInt8) -> UInt8 { v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "a") + v - 10 }

    /// Equality by meaning, as JSON Patch `test` needs: numbers compare by value, object
    /// members regardless of order.
    public func isEquivalent(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b || Double(a) == Double(b)
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEquivalent(to: $1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            let inB = JSONMemberIndex(b)
            return a.allSatisfy { m in inB.position(of: m.key, in: b).map { b[$0].value.isEquivalent(to: m.value) } ?? false }
        default: return false
        }
    }
}

extension JSONValue {
    /// A number from an integer (its decimal text).
    public init(_ value: Int) {
        self = .number(String(value))
    }

    /// The string, when the value is one.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The members in order, when the value is an object.
    public var objectMembers: [JSONMember]? {
        if case .object(let m) = self { return m }
        return nil
    }

    /// The elements, when the value is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
}

public struct JSONMember: Sendable, Hashable {
    public var key: String
    public var value: JSONValue
    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// Parses the UTF-8 bytes of a `String` (valid UTF-8: see `string()`).
struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var pos = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ m: String) -> JSONValue.ParseError { JSONValue.ParseError(message: m, offset: pos) }

    mutating func skipSpace() {
        while pos < bytes.count, bytes[pos] == 0x20 || bytes[pos] == 0x09 || bytes[pos] == 0x0A || bytes[pos] == 0x0D { pos += 1 }
    }

    mutating func literal(_ word: String, _ v: JSONValue) throws(JSONValue.ParseError) -> JSONValue {
        let w = word.utf8
        guard pos + w.count <= bytes.count, bytes[pos..<pos + w.count].elementsEqual(w) else { throw fail("bad literal") }
        pos += w.count
        return v
    }

    /// A value inside `depth` arrays and objects.
    mutating func value(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        guard pos < bytes.count else { throw fail("unexpected end") }
        if bytes[pos] == UInt8(ascii: "[") || bytes[pos] == UInt8(ascii: "{") {
            guard depth < maxDepth else { throw fail("nesting deeper than \(maxDepth) levels") }
        }
        switch bytes[pos] {
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["):
            pos += 1
            var items: [JSONValue] = []
            skipSpace()
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
                pos += 1
                return .array(items)
            }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard pos < bytes.count else { throw fail("unterminated array") }
                if bytes[pos] == UInt8(ascii: ",") {
                    pos += 1
                    continue
                }
                if bytes[pos] == UInt8(ascii: "]") {
                    pos += 1
                    return .array(items)
                }
                throw fail("expected , or ]")
            }
        case UInt8(ascii: "{"):
            pos += 1
            var members: [JSONMember] = []
            // A repeated key keeps its first place and takes the later value.
            var index = JSONMemberIndex(members)
            skipSpace()
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") {
                pos += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let key = try string()
                skipSpace()
                guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { throw fail("expected :") }
                pos += 1
                skipSpace()
                let v = try value(depth: depth + 1)
                if let i = index.position(of: key, in: members) {
                    members[i].value = v
                } else {
                    members.append(JSONMember(key: key, value: v))
                    index.appended(to: members)
                }
                skipSpace()
                guard pos < bytes.count else { throw fail("unterminated object") }
                if bytes[pos] == UInt8(ascii: ",") {
                    pos += 1
                    continue
                }
                if bytes[pos] == UInt8(ascii: "}") {
                    pos += 1
                    return .object(members)
                }
                throw fail("expected , or }")
            }
        default:
            return .number(try number())
        }
    }

    mutating func number() throws(JSONValue.ParseError) -> String {
        let start = pos
        func digits(_ p: inout Int, _ b: [UInt8]) -> Int {
            let s = p
            while p < b.count, b[p] >= 0x30, b[p] <= 0x39 { p += 1 }
            return p - s
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "-") { pos += 1 }
        guard pos < bytes.count else { throw fail("bad number") }
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
        } else {
            guard digits(&pos, bytes) > 0 else { throw fail("unexpected character") }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
            pos += 1
            guard digits(&pos, bytes) > 0 else { throw fail("bad fraction") }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard digits(&pos, bytes) > 0 else { throw fail("bad exponent") }
        }
        return String(decoding: bytes[start..<pos], as: UTF8.self)
    }

    mutating func hex4() throws(JSONValue.ParseError) -> UInt32 {
        guard pos + 4 <= bytes.count else { throw fail("bad \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let h = PercentEncoding.hexValue(bytes[pos]) else { throw fail("bad \\u escape") }
            v = v << 4 | UInt32(h)
            pos += 1
        }
        return v
    }

    mutating func string() throws(JSONValue.ParseError) -> String {
        pos += 1 // opening quote
        // Most strings have no escapes: up to the closing quote they are a slice of the text,
        // which came from a `String` and so is valid UTF-8 (a quote is never inside a
        // multi-byte character).
        let start = pos
        while pos < bytes.count {
            let b = bytes[pos]
            if b == UInt8(ascii: "\"") {
                pos += 1
                return String(decoding: bytes[start..<(pos - 1)], as: UTF8.self)
            }
            if b == UInt8(ascii: "\\") || b < 0x20 { break }
            pos += 1
        }
        var out = Array(bytes[start..<pos])
        while true {
            guard pos < bytes.count else { throw fail("unterminated string") }
            let b = bytes[pos]
            pos += 1
            switch b {
            case UInt8(ascii: "\""):
                guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
                return s
            case UInt8(ascii: "\\"):
                guard pos < bytes.count else { throw fail("unterminated escape") }
                let e = bytes[pos]
                pos += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if code >= 0xD800 && code < 0xDC00 {
                        guard pos + 2 <= bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u") else {
                            throw fail("lone surrogate")
                        }
                        pos += 2
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw fail("bad surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if code >= 0xDC00 && code < 0xE000 {
                        throw fail("lone surrogate")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("bad code point") }
                    out.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    throw fail("bad escape")
                }
            default:
                guard b >= 0x20 else { throw fail("control character in string") }
                out.append(b)
            }
        }
    }
}
