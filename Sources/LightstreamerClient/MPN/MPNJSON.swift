import Foundation

/// A small JSON value with ordered object members, so that the MPN builders produce the same
/// text for the same content (JSONSerialization does not keep key order).
enum MPNJSON: Equatable, Sendable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([MPNJSON])
    case object([(String, MPNJSON)])

    static func == (a: MPNJSON, b: MPNJSON) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.null, .null): return true
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// Parses JSON text; nil when it is not valid JSON.
    static func parse(_ text: String) -> MPNJSON? {
        guard let data = text.data(using: .utf8),
              let any = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return nil }
        return MPNJSON(any: any)
    }

    /// Converts a Foundation value (from JSONSerialization or an application dictionary).
    /// Dictionary keys are sorted, so the result does not depend on hashing order.
    init?(any: Any) {
        if type(of: any) == Bool.self, let b = any as? Bool {
            self = .bool(b)
            return
        }
        if type(of: any) is NSNumber.Type, let n = any as? NSNumber {
            // JSONSerialization's numbers and booleans.
            switch String(cString: n.objCType) {
            case "c", "B": self = .bool(n.boolValue)
            case "f", "d": self = .double(n.doubleValue)
            default: self = .int(n.intValue)
            }
            return
        }
        switch any {
        case let v as MPNJSON: self = v
        case let v as String: self = .string(v)
        case is NSNull: self = .null
        case let v as Bool: self = .bool(v)
        case let v as Int: self = .int(v)
        case let v as Int64: self = .int(Int(truncatingIfNeeded: v))
        case let v as Double: self = .double(v)
        case let v as NSNumber: self = .double(v.doubleValue)
        case let v as [Any]:
            var items: [MPNJSON] = []
            for e in v {
                guard let j = MPNJSON(any: e) else { return nil }
                items.append(j)
            }
            self = .array(items)
        case let v as [String: Any]:
            var members: [(String, MPNJSON)] = []
            for k in v.keys.sorted() {
                guard let value = v[k], let j = MPNJSON(any: value) else { return nil }
                members.append((k, j))
            }
            self = .object(members)
        default:
            return nil
        }
    }

    /// The value as Foundation objects (for `customData`).
    var foundationValue: Any {
        switch self {
        case .string(let s): return s
        case .int(let i): return i
        case .double(let d): return d
        case .bool(let b): return b
        case .null: return NSNull()
        case .array(let a): return a.map(\.foundationValue)
        case .object(let m):
            var d: [String: Any] = [:]
            for (k, v) in m { d[k] = v.foundationValue }
            return d
        }
    }

    var objectMembers: [(String, MPNJSON)]? {
        if case .object(let m) = self { return m }
        return nil
    }

    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// Compact JSON text, members in order.
    var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    func write(into out: inout String) {
        switch self {
        case .string(let s): Self.writeString(s, into: &out)
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite { out += d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d) } else { out += "null" }
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .array(let a):
            out += "["
            for (i, e) in a.enumerated() {
                if i > 0 { out += "," }
                e.write(into: &out)
            }
            out += "]"
        case .object(let m):
            out += "{"
            for (i, (k, v)) in m.enumerated() {
                if i > 0 { out += "," }
                Self.writeString(k, into: &out)
                out += ":"
                v.write(into: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count) + String(u.value, radix: 16)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }
}

/// An ordered JSON object under construction: setting nil removes a member; a new member goes
/// to the end of the canonical order given by `order` (members not listed go after, sorted).
struct MPNJSONObject: Sendable {
    private(set) var members: [String: MPNJSON] = [:]

    init() {}

    init(_ members: [(String, MPNJSON)]) {
        for (k, v) in members { self.members[k] = v }
    }

    subscript(key: String) -> MPNJSON? {
        get { members[key] }
        set { members[key] = newValue }
    }

    var isEmpty: Bool { members.isEmpty }

    /// The members in `order` first, then the others sorted by key.
    func json(order: [String]) -> MPNJSON {
        var list: [(String, MPNJSON)] = []
        for k in order { if let v = members[k] { list.append((k, v)) } }
        for k in members.keys.sorted() where !order.contains(k) { if let v = members[k] { list.append((k, v)) } }
        return .object(list)
    }
}
