import TLCP

/// A compiled notification format: the provider-native JSON of an MPN subscription with its
/// placeholders (`$[n]`, `${field}`, `${LS_MPN_subscription_ID}`, badge `AUTO`) located, so that
/// each notification is built by substitution with correct JSON escaping (a value is always
/// inserted as string content, never as raw JSON).
///
/// Badge rules: the string `"AUTO"` as the value of `aps.badge` (Apple) or of a
/// `notification_count` / `badge` member (Google) becomes the device's AUTO counter; `aps.badge`
/// and `notification_count` are emitted as JSON numbers when the substituted text is an integer.
public struct NotificationFormat: Sendable {
    public let normalizedText: String
    public let platform: MPNPlatform
    /// Whether rendering needs the AUTO badge counter.
    public let usesAutoBadge: Bool
    private let root: TemplateNode

    /// Validates and compiles. Errors: 53 empty, 49 too long, 52 not a JSON object,
    /// 47 bad argument, 51 over the platform's payload size even with empty values.
    public init(_ text: String, fields: [String], platform: MPNPlatform, limits: MPNLimits = MPNLimits()) throws(MPNError) {
        guard !text.allSatisfy(\.isWhitespace) else { throw .formatEmpty }
        try MPNLimits.check(text, max: limits.notificationFormat, "notification format")
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch { throw .formatNotJSON(error.description) }
        guard case .object(let members) = json else { throw .formatNotJSON("not a JSON object") }
        if members.isEmpty { throw .formatEmpty }
        self.platform = platform
        var auto = false
        root = try TemplateNode.build(json, fields: fields, path: [], platform: platform, usesAuto: &auto)
        usesAutoBadge = auto
        normalizedText = try MPNArguments.normalize(text, fields: fields)
        let minimal = render(values: [], subscriptionId: String(repeating: "0", count: 36), badge: 0)
        let size = minimal.serialized.utf8.count
        let limit = limits.payloadLimit(platform)
        if size > limit { throw .payloadTooBig(size, max: limit) }
    }

    /// The payload for one update. `values` in schema order (nil = null → empty text).
    public func render(values: [String?], subscriptionId: String, badge: Int?) -> JSONValue {
        root.render(values: values, subscriptionId: subscriptionId, badge: badge)
    }
}

/// A string of the format split into literal text and placeholders.
struct TemplateString: Sendable {
    let pieces: [MPNArguments.Piece]
    let isAuto: Bool

    var isConstant: Bool { pieces.allSatisfy { if case .text = $0 { return true } else { return false } } }

    func render(values: [String?], subscriptionId: String) -> String {
        var out = ""
        for piece in pieces {
            switch piece {
            case .text(let t): out += t
            case .field(let n): if n - 1 < values.count, let v = values[n - 1] { out += v }
            case .subscriptionId: out += subscriptionId
            }
        }
        return out
    }
}

indirect enum TemplateNode: Sendable {
    case constant(JSONValue)
    case string(TemplateString, badge: BadgeKind)
    case array([TemplateNode])
    case object([(key: TemplateString, value: TemplateNode)])

    enum BadgeKind: Sendable {
        case none
        /// Emitted as a number when integral (aps.badge, notification_count).
        case numeric
        /// Emitted as a string (other "badge" members).
        case text
    }

    static func build(_ json: JSONValue, fields: [String], path: [String], platform: MPNPlatform,
                      usesAuto: inout Bool) throws(MPNError) -> TemplateNode {
        switch json {
        case .string(let s):
            let pieces = try MPNArguments.scan(s[...], fields: fields, allowSubscriptionId: true)
            let key = path.last ?? ""
            var kind = BadgeKind.none
            if platform == .apple, path.suffix(2) == ["aps", "badge"] { kind = .numeric }
            if platform == .google, key == "notification_count" { kind = .numeric }
            if platform == .google, key == "badge" { kind = .text }
            let isAuto = kind != .none && s == "AUTO"
            if isAuto { usesAuto = true }
            let template = TemplateString(pieces: pieces, isAuto: isAuto)
            if template.isConstant && !isAuto && kind == .none { return .constant(json) }
            return .string(template, badge: kind)
        case .array(let items):
            var nodes: [TemplateNode] = []
            for item in items { nodes.append(try build(item, fields: fields, path: path, platform: platform, usesAuto: &usesAuto)) }
            return .array(nodes)
        case .object(let members):
            var nodes: [(key: TemplateString, value: TemplateNode)] = []
            for m in members {
                let key = TemplateString(pieces: try MPNArguments.scan(m.key[...], fields: fields, allowSubscriptionId: true),
                                         isAuto: false)
                nodes.append((key, try build(m.value, fields: fields, path: path + [m.key], platform: platform, usesAuto: &usesAuto)))
            }
            return .object(nodes)
        default:
            return .constant(json)
        }
    }

    func render(values: [String?], subscriptionId: String, badge: Int?) -> JSONValue {
        switch self {
        case .constant(let v): return v
        case .string(let t, let kind):
            let text = t.isAuto ? String(badge ?? 0) : t.render(values: values, subscriptionId: subscriptionId)
            if kind == .numeric, let n = Int(text) { return .number(String(n)) }
            return .string(text)
        case .array(let items):
            return .array(items.map { $0.render(values: values, subscriptionId: subscriptionId, badge: badge) })
        case .object(let members):
            return .object(members.map {
                JSONMember(key: $0.key.render(values: values, subscriptionId: subscriptionId),
                           value: $0.value.render(values: values, subscriptionId: subscriptionId, badge: badge))
            })
        }
    }
}
