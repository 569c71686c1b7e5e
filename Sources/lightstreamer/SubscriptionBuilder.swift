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
            case "yes", "true":
                guard m != .RAW else { throw Invalid(message: "No snapshot in RAW mode") }
                sub.requestedSnapshot = .yes
            case "no", "false":
                guard m != .RAW else { throw Invalid(message: "No snapshot in RAW mode") }
                sub.requestedSnapshot = .no
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
    /// Each distinct name once, in key order: `"name":` already encoded (all keys one after the
    /// other in `keyBytes`, entry `e` ending at `keyEnds[e]`) and the position (0-based) that
    /// carries it.
    private var keyBytes: [UInt8] = []
    private var keyEnds: [Int] = []
    private var positions: [Int] = []
    /// When names repeat: every position of each entry (the last present one wins, as in the
    /// dictionary the event used to be).
    private var repeated: [[Int]]?
    /// `"1":`, `"2":`, … for the updates without names.
    private var positionKeyBytes: [UInt8] = []
    private var positionKeyEnds: [Int] = []

    mutating func write(_ w: inout JSONWriter, sub: String, _ u: ItemUpdate, names byName: Bool) {
        write(&w, sub: sub, u, u.fieldBytes, names: byName)
    }

    private mutating func write(_ w: inout JSONWriter, sub: String, _ u: ItemUpdate, _ fields: FieldBytes, names byName: Bool) {
        w.raw("{\"changed\":")
        if byName, let fieldNames = fields.names {
            prepare(fieldNames)
            writeByName(&w, fields, onlyChanged: true)
            w.raw(",\"event\":\"update\",\"fields\":")
            writeByName(&w, fields, onlyChanged: false)
        } else if byName {
            // Not the library's own ItemUpdate: through its dictionaries.
            Self.writeDictionary(&w, u.changedFields)
            w.raw(",\"event\":\"update\",\"fields\":")
            Self.writeDictionary(&w, u.fields)
        } else {
            preparePositions(fields.count)
            writeByPosition(&w, fields, onlyChanged: true)
            w.raw(",\"event\":\"update\",\"fields\":")
            writeByPosition(&w, fields, onlyChanged: false)
        }
        w.raw(",\"item\":")
        if let name = u.itemName { w.string(name) } else { w.null() }
        w.raw(",\"pos\":")
        w.int(u.itemPos)
        w.raw(u.isSnapshot ? ",\"snapshot\":true,\"sub\":" : ",\"snapshot\":false,\"sub\":")
        w.string(sub)
        w.raw("}\n")
    }

    private static func encodedKey(_ k: String) -> [UInt8] {
        var w = JSONWriter()
        w.key(k)
        return w.bytes
    }

    private mutating func prepare(_ fieldNames: [String]) {
        if let names, names == fieldNames { return }
        names = fieldNames
        var indices: [String: [Int]] = [:]
        for (i, n) in fieldNames.enumerated() { indices[n, default: []].append(i) }
        keyBytes = []
        keyEnds = []
        positions = []
        var all: [[Int]] = []
        for name in JSONKeyOrder.sorted(indices.keys) {
            keyBytes += Self.encodedKey(name)
            keyEnds.append(keyBytes.count)
            positions.append(indices[name]!.last!)
            all.append(indices[name]!)
        }
        repeated = all.count < fieldNames.count ? all : nil
    }

    private mutating func preparePositions(_ n: Int) {
        while positionKeyEnds.count < n {
            positionKeyBytes += Self.encodedKey(String(positionKeyEnds.count + 1))
            positionKeyEnds.append(positionKeyBytes.count)
        }
    }

    /// The value at index `i` as a JSON string, or null.
    @inline(__always)
    private static func value(_ w: inout JSONWriter, _ fields: FieldBytes, _ i: Int) {
        fields.withValue(i) { bytes in
            if let bytes { w.string(utf8: bytes) } else { w.null() }
        }
    }

    private func writeByName(_ w: inout JSONWriter, _ fields: FieldBytes, onlyChanged: Bool) {
        let count = fields.count
        // Written straight into the buffer, after one reservation for the most it may take:
        // the keys, each value's bytes escaped (at most 6 per byte), quotes or null and a comma
        // per entry, the braces.
        let bound = keyBytes.count + JSONWriter.stringBound(fields.dataByteCount) + 8 * positions.count + 2
        w.writing(upTo: bound) { o in
            o[0] = UInt8(ascii: "{")
            var k = 1
            var first = true
            keyBytes.withUnsafeBufferPointer { keys in
                guard let keyBase = keys.baseAddress else { return }
                var start = 0
                for e in 0..<positions.count {
                    let end = keyEnds[e]
                    defer { start = end }
                    var pick = positions[e]
                    if let repeated {
                        // The last position with this name that is present (and changed, for `changed`).
                        pick = -1
                        for i in repeated[e] where i < count && (!onlyChanged || fields.isChanged(i)) { pick = i }
                        guard pick >= 0 else { continue }
                    } else {
                        guard pick < count, !onlyChanged || fields.isChanged(pick) else { continue }
                    }
                    if !first {
                        o[k] = UInt8(ascii: ",")
                        k += 1
                    }
                    first = false
                    (o + k).update(from: keyBase + start, count: end - start)
                    k += end - start
                    k += fields.withValue(pick) { bytes -> Int in
                        if let bytes { return JSONWriter.writeString(bytes, at: o + k) }
                        o[k] = UInt8(ascii: "n")
                        o[k + 1] = UInt8(ascii: "u")
                        o[k + 2] = UInt8(ascii: "l")
                        o[k + 3] = UInt8(ascii: "l")
                        return 4
                    }
                }
            }
            o[k] = UInt8(ascii: "}")
            return k + 1
        }
    }

    private func writeByPosition(_ w: inout JSONWriter, _ fields: FieldBytes, onlyChanged: Bool) {
        w.byte(UInt8(ascii: "{"))
        var first = true
        positionKeyBytes.withUnsafeBufferPointer { keys in
            for i in 0..<fields.count where !onlyChanged || fields.isChanged(i) {
                if !first { w.byte(UInt8(ascii: ",")) }
                first = false
                w.append(UnsafeBufferPointer(rebasing: keys[(i == 0 ? 0 : positionKeyEnds[i - 1])..<positionKeyEnds[i]]))
                Self.value(&w, fields, i)
            }
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
