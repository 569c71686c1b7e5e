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
    /// The platform's payload limit (bytes) the format was compiled for: `render` refuses more.
    public let payloadLimit: Int
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
        payloadLimit = limits.payloadLimit(platform)
        var auto = false
        root = try TemplateNode.build(json, fields: fields, path: [], platform: platform, usesAuto: &auto)
        usesAutoBadge = auto
        normalizedText = try MPNArguments.normalize(text, fields: fields)
        let limit = payloadLimit
        // The format alone: its literal text is at most `limits.notificationFormat` long.
        var minimal = BoundedJSONWriter(limit: Int.max)
        root.write(values: [], subscriptionId: String(repeating: "0", count: 36), badge: 0, to: &minimal)
        if minimal.count > limit { throw .payloadTooBig(minimal.count, max: limit) }
    }

    /// The payload text for one update (`values` in schema order, nil = null → empty text), or
    /// nil when it would pass `limit` bytes (at most `payloadLimit`): rendering stops at the
    /// first byte over, so the work is bounded by the limit, not by the values.
    public func renderText(values: [String?], subscriptionId: String, badge: Int?, limit: Int? = nil) -> String? {
        renderBounded(values: values, subscriptionId: subscriptionId, badge: badge, limit: limit).text
    }

    /// `renderText` as a JSON value.
    public func render(values: [String?], subscriptionId: String, badge: Int?) -> JSONValue? {
        renderText(values: values, subscriptionId: subscriptionId, badge: badge).flatMap { try? JSONValue.parse($0) }
    }

    /// The rendering and how many bytes were built before it stopped (tests).
    func renderBounded(values: [String?], subscriptionId: String, badge: Int?, limit: Int? = nil) -> (text: String?, built: Int) {
        var w = BoundedJSONWriter(limit: min(limit ?? payloadLimit, payloadLimit))
        root.write(values: values, subscriptionId: subscriptionId, badge: badge, to: &w)
        return (w.overflowed ? nil : w.text, w.count)
    }
}

/// A string of the format split into literal text and placeholders.
struct TemplateString: Sendable {
    let pieces: [MPNArguments.Piece]
    let isAuto: Bool

    var isConstant: Bool { pieces.allSatisfy { if case .text = $0 { return true } else { return false } } }

    /// Writes the substituted text, escaped, without quotes.
    func write(values: [String?], subscriptionId: String, to w: inout BoundedJSONWriter) {
        for piece in pieces {
            guard !w.overflowed else { return }
            switch piece {
            case .text(let t): w.escaped(t)
            case .field(let n): if n >= 1, n - 1 < values.count, let v = values[n - 1] { w.escaped(v) }
            case .subscriptionId: w.escaped(subscriptionId)
            }
        }
    }

    /// The substituted text when it is at most `max` bytes (badge values), else nil.
    func text(values: [String?], subscriptionId: String, max: Int) -> String? {
        var out = ""
        var n = 0
        for piece in pieces {
            let part: Substring
            switch piece {
            case .text(let t): part = t
            case .field(let i): part = i >= 1 && i - 1 < values.count ? (values[i - 1].map { $0[...] } ?? "") : ""
            case .subscriptionId: part = subscriptionId[...]
            }
            n += part.utf8.count
            if n > max { return nil }
            out += part
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

    static func build(
        _ json: JSONValue, fields: [String], path: [String], platform: MPNPlatform,
        usesAuto: inout Bool
    ) throws(MPNError) -> TemplateNode {
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
                let key = TemplateString(
                    pieces: try MPNArguments.scan(m.key[...], fields: fields, allowSubscriptionId: true),
                    isAuto: false)
                nodes.append((key, try build(m.value, fields: fields, path: path + [m.key], platform: platform, usesAuto: &usesAuto)))
            }
            return .object(nodes)
        default:
            return .constant(json)
        }
    }

    func write(values: [String?], subscriptionId: String, badge: Int?, to w: inout BoundedJSONWriter) {
        guard !w.overflowed else { return }
        switch self {
        case .constant(let v): w.raw(v.serialized)
        case .string(let t, let kind):
            if t.isAuto {
                writeBadge(String(badge ?? 0), kind: kind, to: &w)
            } else if kind == .numeric {
                // A badge is short: a longer text cannot be an integer and is written as a string.
                if let text = t.text(values: values, subscriptionId: subscriptionId, max: 40) {
                    writeBadge(text, kind: kind, to: &w)
                } else {
                    w.raw("\"")
                    t.write(values: values, subscriptionId: subscriptionId, to: &w)
                    w.raw("\"")
                }
            } else {
                w.raw("\"")
                t.write(values: values, subscriptionId: subscriptionId, to: &w)
                w.raw("\"")
            }
        case .array(let items):
            w.raw("[")
            for (i, item) in items.enumerated() {
                if i > 0 { w.raw(",") }
                item.write(values: values, subscriptionId: subscriptionId, badge: badge, to: &w)
            }
            w.raw("]")
        case .object(let members):
            w.raw("{")
            for (i, m) in members.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("\"")
                m.key.write(values: values, subscriptionId: subscriptionId, to: &w)
                w.raw("\":")
                m.value.write(values: values, subscriptionId: subscriptionId, badge: badge, to: &w)
            }
            w.raw("}")
        }
    }

    private func writeBadge(_ text: String, kind: BadgeKind, to w: inout BoundedJSONWriter) {
        if kind == .numeric, let n = Int(text) {
            w.raw(String(n))
        } else {
            w.raw("\"")
            w.escaped(text)
            w.raw("\"")
        }
    }
}
