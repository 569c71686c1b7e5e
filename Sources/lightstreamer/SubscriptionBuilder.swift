import Foundation
@_spi(Printing) import LightstreamerClient

/// Builds a `Subscription` from user input, checking every precondition first so that bad
/// input becomes an error message instead of a trap.
struct SubscriptionRequest {
    var mode: String
    var items: [String]?
    var group: String?
    var fields: [String]?
    var schema: String?
    var dataAdapter: String?
    var snapshot: String?
    var maxFrequency: String?
    var bufferSize: String?
    var selector: String?
    var secondLevelFields: [String]?
    var secondLevelSchema: String?
    var secondLevelAdapter: String?

    struct Invalid: Error { let message: String }

    static func validItem(_ s: String) -> Bool { !s.isEmpty && !s.contains(" ") && !s.allSatisfy(\.isNumber) }
    static func validField(_ s: String) -> Bool { !s.isEmpty && !s.contains(" ") }

    static func frequency(_ s: String) -> Subscription.RequestedMaxFrequency? {
        switch s {
        case "unlimited": return .unlimited
        case "unfiltered": return .unfiltered
        default:
            guard let v = Double(s), v > 0, v.isFinite else { return nil }
            return .limited(v)
        }
    }

    func make() throws(Invalid) -> Subscription {
        guard let m = Subscription.Mode(rawValue: mode.uppercased()) else { throw Invalid(message: "Unknown mode '\(mode)'") }
        let sub = Subscription(subscriptionMode: m)
        if let items {
            guard !items.isEmpty, items.allSatisfy(Self.validItem) else { throw Invalid(message: "Invalid item list") }
            sub.items = items
        } else if let group {
            guard !group.isEmpty else { throw Invalid(message: "Empty item group") }
            sub.itemGroup = group
        } else {
            throw Invalid(message: "Specify items or group")
        }
        if let fields {
            guard !fields.isEmpty, fields.allSatisfy(Self.validField) else { throw Invalid(message: "Invalid field list") }
            if m == .COMMAND, !(fields.contains("key") && fields.contains("command")) {
                throw Invalid(message: "A COMMAND field list needs the key and command fields")
            }
            sub.fields = fields
        } else if let schema {
            guard !schema.isEmpty else { throw Invalid(message: "Empty field schema") }
            sub.fieldSchema = schema
        } else {
            throw Invalid(message: "Specify fields or schema")
        }
        if let dataAdapter {
            guard !dataAdapter.isEmpty else { throw Invalid(message: "Empty data adapter") }
            sub.dataAdapter = dataAdapter
        }
        if let snapshot {
            switch snapshot {
            case "yes", "true": guard m != .RAW else { throw Invalid(message: "No snapshot in RAW mode") }; sub.requestedSnapshot = .yes
            case "no", "false": guard m != .RAW else { throw Invalid(message: "No snapshot in RAW mode") }; sub.requestedSnapshot = .no
            default:
                guard let n = Int(snapshot), n > 0, m == .DISTINCT else { throw Invalid(message: "Invalid snapshot '\(snapshot)'") }
                sub.requestedSnapshot = .length(n)
            }
        }
        if let maxFrequency {
            guard m != .RAW, let f = Self.frequency(maxFrequency) else { throw Invalid(message: "Invalid max frequency '\(maxFrequency)'") }
            sub.requestedMaxFrequency = f
        }
        if let bufferSize {
            if bufferSize == "unlimited" {
                sub.requestedBufferSize = .unlimited
            } else {
                guard let n = Int(bufferSize), n > 0 else { throw Invalid(message: "Invalid buffer size '\(bufferSize)'") }
                sub.requestedBufferSize = .limited(n)
            }
        }
        if let selector {
            guard !selector.isEmpty else { throw Invalid(message: "Empty selector") }
            sub.selector = selector
        }
        if secondLevelFields != nil || secondLevelSchema != nil || secondLevelAdapter != nil {
            guard m == .COMMAND else { throw Invalid(message: "Second-level settings need COMMAND mode") }
            if let f = secondLevelFields {
                guard !f.isEmpty, f.allSatisfy(Self.validField) else { throw Invalid(message: "Invalid second-level fields") }
                sub.commandSecondLevelFields = f
            } else if let s = secondLevelSchema {
                guard !s.isEmpty else { throw Invalid(message: "Empty second-level schema") }
                sub.commandSecondLevelFieldSchema = s
            }
            if let a = secondLevelAdapter {
                guard !a.isEmpty else { throw Invalid(message: "Empty second-level adapter") }
                sub.commandSecondLevelDataAdapter = a
            }
        }
        return sub
    }
}

/// JSON renderings shared by `session` and `subscribe --json`.
enum EventJSON {
    static func frequency(_ f: RealMaxFrequency?) -> String? {
        switch f {
        case nil: return nil
        case .unlimited?: return "unlimited"
        case .limited(let v)?: return v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
        }
    }
}

/// The `update` event of `session` and `subscribe --json`, written straight into the output
/// buffer, keys in the order `JSONSerialization`'s `.sortedKeys` gave them:
/// `{"changed":{…},"event":"update","fields":{…},"item":…,"pos":…,"snapshot":…,"sub":…}`.
/// `fields` holds every field, `changed` the changed ones, by name when the subscription has a
/// field list (`names`), else by position (`"1"`, `"2"`, …); null values are JSON nulls.
struct UpdateJSON {
    /// The field names the key order below was computed for.
    private var names: [String]?
    /// Each distinct name once, in key order, with the positions (0-based) that carry it: with
    /// a repeated name, the last of them wins, as in the dictionary the event used to be.
    private var order: [(name: String, indices: [Int])] = []

    mutating func write(_ w: inout JSONWriter, sub: String, _ u: ItemUpdate, names byName: Bool) {
        let (values, changed, fieldNames) = u.fieldArrays
        w.raw("{\"changed\":")
        if byName, let fieldNames {
            prepare(fieldNames)
            writeByName(&w, values, changed, onlyChanged: true)
            w.raw(",\"event\":\"update\",\"fields\":")
            writeByName(&w, values, changed, onlyChanged: false)
        } else if byName {
            // Not the library's own ItemUpdate: through its dictionaries.
            Self.writeDictionary(&w, u.changedFields)
            w.raw(",\"event\":\"update\",\"fields\":")
            Self.writeDictionary(&w, u.fields)
        } else {
            Self.writeByPosition(&w, values, changed, onlyChanged: true)
            w.raw(",\"event\":\"update\",\"fields\":")
            Self.writeByPosition(&w, values, changed, onlyChanged: false)
        }
        w.raw(",\"item\":")
        w.string(u.itemName)
        w.raw(",\"pos\":")
        w.int(u.itemPos)
        w.raw(",\"snapshot\":")
        w.bool(u.isSnapshot)
        w.raw(",\"sub\":")
        w.string(sub)
        w.raw("}\n")
    }

    private mutating func prepare(_ fieldNames: [String]) {
        if let names, names == fieldNames { return }
        names = fieldNames
        var indices: [String: [Int]] = [:]
        for (i, n) in fieldNames.enumerated() { indices[n, default: []].append(i) }
        order = JSONKeyOrder.sorted(indices.keys).map { ($0, indices[$0]!) }
    }

    private func writeByName(_ w: inout JSONWriter, _ values: [String?], _ changed: [Bool], onlyChanged: Bool) {
        w.byte(UInt8(ascii: "{"))
        var first = true
        for (name, indices) in order {
            // The last position with this name that is present (and changed, for `changed`).
            var pick = -1
            for i in indices where i < values.count && (!onlyChanged || changed[i]) { pick = i }
            guard pick >= 0 else { continue }
            if !first { w.byte(UInt8(ascii: ",")) }
            first = false
            w.key(name)
            w.string(values[pick])
        }
        w.byte(UInt8(ascii: "}"))
    }

    private static func writeByPosition(_ w: inout JSONWriter, _ values: [String?], _ changed: [Bool], onlyChanged: Bool) {
        w.byte(UInt8(ascii: "{"))
        var first = true
        for i in values.indices where !onlyChanged || changed[i] {
            if !first { w.byte(UInt8(ascii: ",")) }
            first = false
            w.byte(UInt8(ascii: "\""))
            w.int(i + 1)
            w.raw("\":")
            w.string(values[i])
        }
        w.byte(UInt8(ascii: "}"))
    }

    private static func writeDictionary(_ w: inout JSONWriter, _ d: [String: String?]) {
        w.byte(UInt8(ascii: "{"))
        for (i, k) in JSONKeyOrder.sorted(d.keys).enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.key(k)
            w.string(d[k] ?? nil)
        }
        w.byte(UInt8(ascii: "}"))
    }
}
