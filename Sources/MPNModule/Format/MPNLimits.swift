import TLCP

/// Size limits of MPN arguments (docs/protocol/MPN.md §1: the column widths of Lightstreamer's
/// schema) and payloads (APNs and FCM: 4096 bytes). Over a limit is error 49 (arguments) or
/// 51 (payload).
public struct MPNLimits: Sendable, Hashable, Codable {
    public var trigger = 255
    public var notificationFormat = 8192
    public var adapterName = 32
    public var itemName = 32
    public var fieldName = 32
    public var group = 255
    public var schema = 255
    public var applicationId = 128
    public var deviceToken = 256
    public var applePayload = 4096
    public var googlePayload = 4096
    /// MPN subscriptions (ACTIVE and TRIGGERED) one device may have; a new activation beyond
    /// it is refused with 49 (modifications of existing ones are not counted).
    public var subscriptionsPerDevice = 100

    public init() {}

    public func payloadLimit(_ platform: MPNPlatform) -> Int {
        platform == .apple ? applePayload : googlePayload
    }

    /// Throws 49 when `value` has more than `max` characters.
    public static func check(_ value: String?, max: Int, _ what: String) throws(MPNError) {
        guard let value else { return }
        if value.count > max { throw .tooLong(what, max: max) }
    }

    public func checkDevice(applicationId: String, token: String) throws(MPNError) {
        try Self.check(applicationId, max: self.applicationId, "application id")
        try Self.check(token, max: deviceToken, "device token")
    }

    public func checkSubscription(
        adapterSet: String, dataAdapter: String, group: String, schema: String,
        items: [String], fields: [String], format: String?, trigger: String?
    ) throws(MPNError) {
        try Self.check(adapterSet, max: adapterName, "adapter set name")
        try Self.check(dataAdapter, max: adapterName, "data adapter name")
        try Self.check(group, max: self.group, "item group")
        try Self.check(schema, max: self.schema, "field schema")
        for item in items { try Self.check(item, max: itemName, "item name") }
        for field in fields { try Self.check(field, max: fieldName, "field name") }
        try Self.check(format, max: notificationFormat, "notification format")
        try Self.check(trigger, max: self.trigger, "trigger expression")
    }
}

/// Lenient decoding: every limit optional.
extension MPNLimits {
    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func v(_ k: CodingKeys, _ d: Int) throws -> Int { try c.decodeIfPresent(Int.self, forKey: k) ?? d }
        trigger = try v(.trigger, trigger)
        notificationFormat = try v(.notificationFormat, notificationFormat)
        adapterName = try v(.adapterName, adapterName)
        itemName = try v(.itemName, itemName)
        fieldName = try v(.fieldName, fieldName)
        group = try v(.group, group)
        schema = try v(.schema, schema)
        applicationId = try v(.applicationId, applicationId)
        deviceToken = try v(.deviceToken, deviceToken)
        applePayload = try v(.applePayload, applePayload)
        googlePayload = try v(.googlePayload, googlePayload)
        subscriptionsPerDevice = try v(.subscriptionsPerDevice, subscriptionsPerDevice)
    }
}
