import Foundation
import LightstreamerClient

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
    static func update(sub: String, _ u: ItemUpdate, names: Bool) -> [String: Any?] {
        var fields: [String: Any] = [:]
        var changed: [String: Any] = [:]
        if names {
            for (k, v) in u.fields { fields[k] = v ?? NSNull() }
            for (k, v) in u.changedFields { changed[k] = v ?? NSNull() }
        } else {
            for (k, v) in u.fieldsByPositions { fields[String(k)] = v ?? NSNull() }
            for (k, v) in u.changedFieldsByPositions { changed[String(k)] = v ?? NSNull() }
        }
        return ["event": "update", "sub": sub, "item": u.itemName, "pos": u.itemPos, "snapshot": u.isSnapshot,
                "fields": fields, "changed": changed]
    }

    static func frequency(_ f: RealMaxFrequency?) -> String? {
        switch f {
        case nil: return nil
        case .unlimited?: return "unlimited"
        case .limited(let v)?: return v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
        }
    }
}
