import Foundation
import TLCP

/// Builds a Google (FCM HTTP v1) notification format: a v1 `Message` without its target, the
/// server adding the device token. Setters write the `android` block (`android.notification.*`,
/// `android.collapse_key`, `android.priority`, `android.ttl`, `android.data`) as the MPN Module
/// expects; passing nil removes a key. `build()` writes keys in a fixed order.
public class FirebaseMPNBuilder {
    static let androidOrder = ["collapse_key", "priority", "ttl", "notification", "data"]
    static let notificationOrder = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "channel_id", "image",
        "title_loc_key", "title_loc_args", "body_loc_key", "body_loc_args",
    ]

    private var root = MPNJSONObject()
    private var android = MPNJSONObject()
    private var notification = MPNJSONObject()
    private var dataMap: [String: String] = [:]

    /// An empty builder.
    public init() {}

    /// A builder holding an existing format; nil when the text is not a JSON object.
    public init?(notificationFormat: String) {
        guard let members = JSONValue.mpnParse(notificationFormat)?.objectMembers else { return nil }
        for m in members {
            if m.key == "android", let a = m.value.objectMembers {
                for am in a {
                    if am.key == "notification", let n = am.value.objectMembers {
                        notification = MPNJSONObject(n)
                    } else if am.key == "data", let d = am.value.objectMembers {
                        for dm in d { if let s = dm.value.stringValue { dataMap[dm.key] = s } }
                    } else {
                        android[am.key] = am.value
                    }
                }
            } else {
                root[m.key] = m.value
            }
        }
    }

    /// The format as JSON text.
    public func build() -> String {
        var a = android
        if !notification.isEmpty { a["notification"] = notification.json(order: Self.notificationOrder) }
        if !dataMap.isEmpty { a["data"] = .object(dataMap.keys.sorted().map { JSONMember(key: $0, value: .string(dataMap[$0] ?? "")) }) }
        var r = root
        r["android"] = a.json(order: Self.androidOrder)
        return r.json(order: ["android"]).mpnText
    }

    private func setNotification(_ key: String, _ value: String?) -> FirebaseMPNBuilder {
        notification[key] = value.map { .string($0) }
        return self
    }

    private func setNotification(_ key: String, _ value: [String]?) -> FirebaseMPNBuilder {
        notification[key] = value.map { .array($0.map { .string($0) }) }
        return self
    }

    private func strings(_ key: String) -> [String]? {
        guard case .array(let a)? = notification[key] else { return nil }
        return a.compactMap(\.stringValue)
    }

    /// Sets `android.notification.title`; nil removes it. Returns the builder.
    @discardableResult public func title(_ title: String?) -> FirebaseMPNBuilder { setNotification("title", title) }
    /// `android.notification.title`; nil when absent.
    public var title: String? { notification["title"]?.stringValue }
    /// Sets `android.notification.body`; nil removes it. Returns the builder.
    @discardableResult public func body(_ body: String?) -> FirebaseMPNBuilder { setNotification("body", body) }
    /// `android.notification.body`; nil when absent.
    public var body: String? { notification["body"]?.stringValue }
    /// Sets `android.notification.icon`; nil removes it. Returns the builder.
    @discardableResult public func icon(_ icon: String?) -> FirebaseMPNBuilder { setNotification("icon", icon) }
    /// `android.notification.icon`; nil when absent.
    public var icon: String? { notification["icon"]?.stringValue }
    /// Sets `android.notification.color`; nil removes it. Returns the builder.
    @discardableResult public func color(_ color: String?) -> FirebaseMPNBuilder { setNotification("color", color) }
    /// `android.notification.color`; nil when absent.
    public var color: String? { notification["color"]?.stringValue }
    /// Sets `android.notification.sound`; nil removes it. Returns the builder.
    @discardableResult public func sound(_ sound: String?) -> FirebaseMPNBuilder { setNotification("sound", sound) }
    /// `android.notification.sound`; nil when absent.
    public var sound: String? { notification["sound"]?.stringValue }
    /// Sets `android.notification.tag`; nil removes it. Returns the builder.
    @discardableResult public func tag(_ tag: String?) -> FirebaseMPNBuilder { setNotification("tag", tag) }
    /// `android.notification.tag`; nil when absent.
    public var tag: String? { notification["tag"]?.stringValue }
    /// Sets `android.notification.click_action`; nil removes it. Returns the builder.
    @discardableResult public func clickAction(_ clickAction: String?) -> FirebaseMPNBuilder {
        setNotification("click_action", clickAction)
    }
    /// `android.notification.click_action`; nil when absent.
    public var clickAction: String? { notification["click_action"]?.stringValue }
    /// Sets `android.notification.channel_id`; nil removes it. Returns the builder.
    @discardableResult public func channelId(_ channelId: String?) -> FirebaseMPNBuilder { setNotification("channel_id", channelId) }
    /// `android.notification.channel_id`; nil when absent.
    public var channelId: String? { notification["channel_id"]?.stringValue }
    /// Sets `android.notification.image`; nil removes it. Returns the builder.
    @discardableResult public func image(_ image: String?) -> FirebaseMPNBuilder { setNotification("image", image) }
    /// `android.notification.image`; nil when absent.
    public var image: String? { notification["image"]?.stringValue }
    /// Sets `android.notification.title_loc_key`; nil removes it. Returns the builder.
    @discardableResult public func titleLocKey(_ titleLocKey: String?) -> FirebaseMPNBuilder {
        setNotification("title_loc_key", titleLocKey)
    }
    /// `android.notification.title_loc_key`; nil when absent.
    public var titleLocKey: String? { notification["title_loc_key"]?.stringValue }
    /// Sets `android.notification.title_loc_args`; nil removes it. Returns the builder.
    @discardableResult public func titleLocArguments(_ titleLocArguments: [String]?) -> FirebaseMPNBuilder {
        setNotification("title_loc_args", titleLocArguments)
    }
    /// `android.notification.title_loc_args`; nil when absent.
    public var titleLocArguments: [String]? { strings("title_loc_args") }
    /// Sets `android.notification.body_loc_key`; nil removes it. Returns the builder.
    @discardableResult public func bodyLocKey(_ bodyLocKey: String?) -> FirebaseMPNBuilder { setNotification("body_loc_key", bodyLocKey) }
    /// `android.notification.body_loc_key`; nil when absent.
    public var bodyLocKey: String? { notification["body_loc_key"]?.stringValue }
    /// Sets `android.notification.body_loc_args`; nil removes it. Returns the builder.
    @discardableResult public func bodyLocArguments(_ bodyLocArguments: [String]?) -> FirebaseMPNBuilder {
        setNotification("body_loc_args", bodyLocArguments)
    }
    /// `android.notification.body_loc_args`; nil when absent.
    public var bodyLocArguments: [String]? { strings("body_loc_args") }

    /// Sets `android.collapse_key`; nil removes it. Returns the builder.
    @discardableResult public func collapseKey(_ collapseKey: String?) -> FirebaseMPNBuilder {
        android["collapse_key"] = collapseKey.map { .string($0) }
        return self
    }
    /// `android.collapse_key`; nil when absent.
    public var collapseKey: String? { android["collapse_key"]?.stringValue }

    /// `NORMAL` or `HIGH`.
    @discardableResult public func priority(_ priority: String?) -> FirebaseMPNBuilder {
        android["priority"] = priority.map { .string($0) }
        return self
    }
    /// `android.priority`; nil when absent.
    public var priority: String? { android["priority"]?.stringValue }

    /// Time to live in seconds, written as FCM's duration string (`"3600s"`).
    @discardableResult public func timeToLive(_ seconds: Int?) -> FirebaseMPNBuilder {
        android["ttl"] = seconds.map { .string("\($0)s") }
        return self
    }
    /// `android.ttl` in seconds; nil when absent or not a number of seconds.
    public var timeToLive: Int? {
        guard let s = android["ttl"]?.stringValue, s.hasSuffix("s") else { return nil }
        return Int(s.dropLast())
    }

    /// `android.data`: string values only (an FCM rule).
    @discardableResult public func data(_ data: [String: String]?) -> FirebaseMPNBuilder {
        dataMap = data ?? [:]
        return self
    }
    /// `android.data`; nil when empty.
    public var data: [String: String]? { dataMap.isEmpty ? nil : dataMap }
}
