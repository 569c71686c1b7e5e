import Foundation
import TLCP

/// What the MPN builders need of `JSONValue` besides the TLCP model: reading a format as the
/// builders keep it (object keys sorted, so nothing depends on the text's key order), values
/// to and from Foundation objects (`customData`), and the text they write, where a number
/// is an integer whenever its value is one.
extension JSONValue {
    /// Parses a format; nil when it is not valid JSON. Object keys come out sorted (the last of
    /// duplicate keys wins).
    static func mpnParse(_ text: String) -> JSONValue? {
        guard let v = try? JSONValue.parse(text) else { return nil }
        return v.sortingKeys()
    }

    /// The same value with the keys of every object sorted, each key once (its last value).
    func sortingKeys() -> JSONValue {
        switch self {
        case .null, .bool, .number, .string: return self
        case .array(let a): return .array(a.map { $0.sortingKeys() })
        case .object(let members):
            var last: [String: JSONValue] = [:]
            for m in members { last[m.key] = m.value.sortingKeys() }
            return .object(last.keys.sorted().compactMap { k in last[k].map { JSONMember(key: k, value: $0) } })
        }
    }

    /// A number from a Double, as the builders store it.
    init(_ value: Double) {
        self = .number(String(value))
    }

    /// Converts a Foundation value (from an application dictionary). Dictionary keys are
    /// sorted, so the result does not depend on hashing order; nil for a value that is not JSON.
    init?(foundation any: Any) {
        if type(of: any) == Bool.self, let b = any as? Bool {
            self = .bool(b)
            return
        }
        if type(of: any) is NSNumber.Type, let n = any as? NSNumber {
            switch String(cString: n.objCType) {
            case "c", "B": self = .bool(n.boolValue)
            case "f", "d": self = JSONValue(n.doubleValue)
            default: self = JSONValue(n.intValue)
            }
            return
        }
        switch any {
        case let v as JSONValue: self = v
        case let v as String: self = .string(v)
        case is NSNull: self = .null
        case let v as Bool: self = .bool(v)
        case let v as Int: self = JSONValue(v)
        case let v as Int64: self = JSONValue(Int(truncatingIfNeeded: v))
        case let v as Double: self = JSONValue(v)
        case let v as NSNumber: self = JSONValue(v.doubleValue)
        case let v as [Any]:
            var items: [JSONValue] = []
            for e in v {
                guard let j = JSONValue(foundation: e) else { return nil }
                items.append(j)
            }
            self = .array(items)
        case let v as [String: Any]:
            var members: [JSONMember] = []
            for k in v.keys.sorted() {
                guard let value = v[k], let j = JSONValue(foundation: value) else { return nil }
                members.append(JSONMember(key: k, value: j))
            }
            self = .object(members)
        default:
            return nil
        }
    }

    /// Whether a number's text is an integer (no fraction, no exponent).
    static func isIntegerText(_ text: String) -> Bool {
        !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) && Int(text) != nil
    }

    /// The value as Foundation objects: integers as `Int`, other numbers as `Double`.
    var foundationValue: Any {
        switch self {
        case .string(let s): return s
        case .number(let t): return Self.isIntegerText(t) ? (Int(t) ?? 0) : (Double(t) ?? 0)
        case .bool(let b): return b
        case .null: return NSNull()
        case .array(let a): return a.map(\.foundationValue)
        case .object(let m):
            var d: [String: Any] = [:]
            for member in m { d[member.key] = member.value.foundationValue }
            return d
        }
    }

    /// A number's integer value: an integer, or a number with an integral value below 10^15.
    var mpnIntValue: Int? {
        guard case .number(let t) = self else { return nil }
        if Self.isIntegerText(t) { return Int(t) }
        guard let d = Double(t), d == d.rounded(), abs(d) < 1e15 else { return nil }
        return Int(d)
    }

    /// A number's text as the builders give it: an integral value below 10^15 without a
    /// fraction, another value in Swift's shortest form.
    static func mpnNumberString(_ t: String) -> String {
        if isIntegerText(t), let i = Int(t) { return String(i) }
        guard let d = Double(t) else { return t }
        return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }

    /// Compact JSON text, members in order, numbers as `mpnNumberString` gives them (`null`
    /// for a non-finite one).
    var mpnText: String { withMPNNumbers().serialized }

    private func withMPNNumbers() -> JSONValue {
        switch self {
        case .null, .bool, .string: return self
        case .number(let t):
            if let d = Double(t), !d.isFinite { return .null }
            return .number(Self.mpnNumberString(t))
        case .array(let a): return .array(a.map { $0.withMPNNumbers() })
        case .object(let m): return .object(m.map { JSONMember(key: $0.key, value: $0.value.withMPNNumbers()) })
        }
    }
}
