import Foundation
import TLCP

/// Builds the JSON of an Apple (APNs) notification format (docs/protocol/CLIENT-API.md §14): the
/// `aps` dictionary plus custom data. Every setter returns the builder; passing nil removes the
/// key.
///
/// `build()` writes members in a fixed order: custom data (keys sorted), then `aps` with
/// `alert`, `badge`, `sound`, `thread-id`, `category`, `content-available`, `mutable-content`,
/// then any other `aps` key read from a format; inside a dictionary `alert`: `title`,
/// `subtitle`, `body`, `title-loc-key`, `title-loc-args`, `loc-key`, `loc-args`,
/// `action-loc-key`, `launch-image`.
public class MPNBuilder {
    static let apsOrder = ["alert", "badge", "sound", "thread-id", "category", "content-available", "mutable-content"]
    static let alertOrder = [
        "title", "subtitle", "body", "title-loc-key", "title-loc-args", "loc-key", "loc-args",
        "action-loc-key", "launch-image",
    ]

    private var aps = MPNJSONObject()
    private var custom = MPNJSONObject()

    /// An empty builder.
    public init() {}

    /// A builder holding an existing format; nil when the text is not a JSON object. The `aps`
    /// member is split from the custom data.
    public init?(notificationFormat: String) {
        guard let members = JSONValue.mpnParse(notificationFormat)?.objectMembers else { return nil }
        for m in members {
            if m.key == "aps", let a = m.value.objectMembers {
                aps = MPNJSONObject(a)
            } else {
                custom[m.key] = m.value
            }
        }
    }

    /// The format as JSON text.
    public func build() -> String {
        var root = custom.json(order: []).objectMembers ?? []
        var apsObject = aps
        if case .object(let m)? = aps["alert"] { apsObject["alert"] = MPNJSONObject(m).json(order: Self.alertOrder) }
        root.append(JSONMember(key: "aps", value: apsObject.json(order: Self.apsOrder)))
        return JSONValue.object(root).mpnText
    }

    // MARK: alert

    private var alertObject: MPNJSONObject {
        if case .object(let m)? = aps["alert"] { return MPNJSONObject(m) }
        return MPNJSONObject()
    }

    private func alertString(_ key: String) -> String? {
        alertObject[key]?.stringValue
    }

    private func alertStrings(_ key: String) -> [String]? {
        guard case .array(let a)? = alertObject[key] else { return nil }
        return a.compactMap(\.stringValue)
    }

    private func setAlert(_ key: String, _ value: JSONValue?) {
        var o = alertObject
        o[key] = value
        aps["alert"] = o.isEmpty ? nil : o.json(order: Self.alertOrder)
    }

    /// `aps.alert` as a plain string (replaces a dictionary alert).
    @discardableResult public func alert(_ alert: String?) -> MPNBuilder {
        aps["alert"] = alert.map { .string($0) }
        return self
    }

    /// The string alert; nil when the alert is a dictionary or absent.
    public var alert: String? { aps["alert"]?.stringValue }

    /// Sets `aps.alert.body`; nil removes it. Returns the builder.
    @discardableResult public func body(_ body: String?) -> MPNBuilder {
        setAlert("body", body.map { .string($0) })
        return self
    }
    /// `aps.alert.body`; nil when absent.
    public var body: String? { alertString("body") }

    /// Sets `aps.alert.loc-args`; nil removes it. Returns the builder.
    @discardableResult public func bodyLocArguments(_ bodyLocArguments: [String]?) -> MPNBuilder {
        setAlert("loc-args", bodyLocArguments.map { .array($0.map { .string($0) }) })
        return self
    }
    /// `aps.alert.loc-args`; nil when absent.
    public var bodyLocArguments: [String]? { alertStrings("loc-args") }

    /// Sets `aps.alert.loc-key`; nil removes it. Returns the builder.
    @discardableResult public func bodyLocKey(_ bodyLocKey: String?) -> MPNBuilder {
        setAlert("loc-key", bodyLocKey.map { .string($0) })
        return self
    }
    /// `aps.alert.loc-key`; nil when absent.
    public var bodyLocKey: String? { alertString("loc-key") }

    /// Sets `aps.alert.launch-image`; nil removes it. Returns the builder.
    @discardableResult public func launchImage(_ launchImage: String?) -> MPNBuilder {
        setAlert("launch-image", launchImage.map { .string($0) })
        return self
    }
    /// `aps.alert.launch-image`; nil when absent.
    public var launchImage: String? { alertString("launch-image") }

    /// Sets `aps.alert.action-loc-key`; nil removes it. Returns the builder.
    @discardableResult public func locActionKey(_ locActionKey: String?) -> MPNBuilder {
        setAlert("action-loc-key", locActionKey.map { .string($0) })
        return self
    }
    /// `aps.alert.action-loc-key`; nil when absent.
    public var locActionKey: String? { alertString("action-loc-key") }

    /// Sets `aps.alert.title`; nil removes it. Returns the builder.
    @discardableResult public func title(_ title: String?) -> MPNBuilder {
        setAlert("title", title.map { .string($0) })
        return self
    }
    /// `aps.alert.title`; nil when absent.
    public var title: String? { alertString("title") }

    /// Sets `aps.alert.subtitle`; nil removes it. Returns the builder.
    @discardableResult public func subtitle(_ subtitle: String?) -> MPNBuilder {
        setAlert("subtitle", subtitle.map { .string($0) })
        return self
    }
    /// `aps.alert.subtitle`; nil when absent.
    public var subtitle: String? { alertString("subtitle") }

    /// Sets `aps.alert.title-loc-args`; nil removes it. Returns the builder.
    @discardableResult public func titleLocArguments(_ titleLocArguments: [String]?) -> MPNBuilder {
        setAlert("title-loc-args", titleLocArguments.map { .array($0.map { .string($0) }) })
        return self
    }
    /// `aps.alert.title-loc-args`; nil when absent.
    public var titleLocArguments: [String]? { alertStrings("title-loc-args") }

    /// Sets `aps.alert.title-loc-key`; nil removes it. Returns the builder.
    @discardableResult public func titleLocKey(_ titleLocKey: String?) -> MPNBuilder {
        setAlert("title-loc-key", titleLocKey.map { .string($0) })
        return self
    }
    /// `aps.alert.title-loc-key`; nil when absent.
    public var titleLocKey: String? { alertString("title-loc-key") }

    // MARK: numbers that may also be strings (e.g. "AUTO" or "${count}")

    private func intValue(_ key: String) -> Int? {
        switch aps[key] {
        case .number?: return aps[key]?.mpnIntValue
        case .string(let s)?: return Int(s)
        default: return nil
        }
    }

    private func stringValue(_ key: String) -> String? {
        switch aps[key] {
        case .string(let s)?: return s
        case .number(let t)?: return JSONValue.mpnNumberString(t)
        default: return nil
        }
    }

    /// Sets `aps.badge` (an integer); nil removes it. Returns the builder.
    @discardableResult public func badge(with badge: Int) -> MPNBuilder {
        aps["badge"] = JSONValue(badge)
        return self
    }
    /// Sets `aps.badge` (text, e.g. a `${field}` placeholder); nil removes it. Returns the builder.
    @discardableResult public func badge(with badge: String?) -> MPNBuilder {
        aps["badge"] = badge.map { .string($0) }
        return self
    }
    /// `aps.badge` as an integer; nil when absent or not a whole number.
    public var badgeAsInt: Int? { intValue("badge") }
    /// `aps.badge` as text; nil when absent.
    public var badgeAsString: String? { stringValue("badge") }

    /// Sets `aps.content-available` (an integer); nil removes it. Returns the builder.
    @discardableResult public func contentAvailable(with contentAvailable: Int) -> MPNBuilder {
        aps["content-available"] = JSONValue(contentAvailable)
        return self
    }
    /// Sets `aps.content-available` (text, e.g. a `${field}` placeholder); nil removes it. Returns the builder.
    @discardableResult public func contentAvailable(with contentAvailable: String?) -> MPNBuilder {
        aps["content-available"] = contentAvailable.map { .string($0) }
        return self
    }
    /// `aps.content-available` as an integer; nil when absent or not a whole number.
    public var contentAvailableAsInt: Int? { intValue("content-available") }
    /// `aps.content-available` as text; nil when absent.
    public var contentAvailableAsString: String? { stringValue("content-available") }

    /// Sets `aps.mutable-content` (an integer); nil removes it. Returns the builder.
    @discardableResult public func mutableContent(with mutableContent: Int) -> MPNBuilder {
        aps["mutable-content"] = JSONValue(mutableContent)
        return self
    }
    /// Sets `aps.mutable-content` (text, e.g. a `${field}` placeholder); nil removes it. Returns the builder.
    @discardableResult public func mutableContent(with mutableContent: String?) -> MPNBuilder {
        aps["mutable-content"] = mutableContent.map { .string($0) }
        return self
    }
    /// `aps.mutable-content` as an integer; nil when absent or not a whole number.
    public var mutableContentAsInt: Int? { intValue("mutable-content") }
    /// `aps.mutable-content` as text; nil when absent.
    public var mutableContentAsString: String? { stringValue("mutable-content") }

    // MARK: plain strings

    /// Sets `aps.category`; nil removes it. Returns the builder.
    @discardableResult public func category(_ category: String?) -> MPNBuilder {
        aps["category"] = category.map { .string($0) }
        return self
    }
    /// `aps.category`; nil when absent.
    public var category: String? { aps["category"]?.stringValue }

    /// Sets `aps.sound`; nil removes it. Returns the builder.
    @discardableResult public func sound(_ sound: String?) -> MPNBuilder {
        aps["sound"] = sound.map { .string($0) }
        return self
    }
    /// `aps.sound`; nil when absent.
    public var sound: String? { aps["sound"]?.stringValue }

    /// Sets `aps.thread-id`; nil removes it. Returns the builder.
    @discardableResult public func threadId(_ threadId: String?) -> MPNBuilder {
        aps["thread-id"] = threadId.map { .string($0) }
        return self
    }
    /// `aps.thread-id`; nil when absent.
    public var threadId: String? { aps["thread-id"]?.stringValue }

    // MARK: custom data

    /// Members next to `aps` (an `aps` key in the dictionary is ignored). Values must be JSON
    /// values (strings, numbers, booleans, arrays, dictionaries, NSNull); others are dropped.
    @discardableResult public func customData(_ customData: [String: Any]?) -> MPNBuilder {
        custom = MPNJSONObject()
        for (k, v) in customData ?? [:] where k != "aps" {
            if let j = JSONValue(foundation: v) { custom[k] = j }
        }
        return self
    }

    /// The members next to `aps`; nil when there are none.
    public var customData: [String: Any]? {
        guard !custom.isEmpty else { return nil }
        var d: [String: Any] = [:]
        for (k, v) in custom.members { d[k] = v.foundationValue }
        return d
    }
}
