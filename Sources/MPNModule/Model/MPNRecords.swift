import TLCP

/// Milliseconds since 1970 (UTC): the unit of every timestamp the MPN Module stores and shows
/// (`status_timestamp` of the internal items).
public typealias MPNTimestamp = Int64

/// A device's status.
public enum MPNDeviceStatus: String, Sendable, Hashable, CaseIterable {
    case active = "ACTIVE"
    /// The provider rejected the token; resumed by a token change.
    case suspended = "SUSPENDED"
}

/// An MPN subscription's status.
public enum MPNSubscriptionStatus: String, Sendable, Hashable, CaseIterable {
    case active = "ACTIVE"
    /// Its trigger fired: one notification went out and no more will.
    case triggered = "TRIGGERED"
}

/// A device as stored: one app on one physical device, keyed by (platform, application id,
/// token), with a server-assigned UUID.
public struct MPNDeviceRecord: Sendable, Hashable {
    public var id: String
    public var platform: MPNPlatform
    public var applicationId: String
    public var deviceToken: String
    public var status: MPNDeviceStatus
    public var statusTimestamp: MPNTimestamp
    /// Last registration or request touching the device (inactivity collection).
    public var lastAccess: MPNTimestamp
    /// The AUTO badge counter: the badge of the last notification sent with `AUTO`.
    public var badge: Int
    public var createdAt: MPNTimestamp

    public init(
        id: String, platform: MPNPlatform, applicationId: String, deviceToken: String,
        status: MPNDeviceStatus = .active, statusTimestamp: MPNTimestamp, lastAccess: MPNTimestamp,
        badge: Int = 0, createdAt: MPNTimestamp
    ) {
        self.id = id
        self.platform = platform
        self.applicationId = applicationId
        self.deviceToken = deviceToken
        self.status = status
        self.statusTimestamp = statusTimestamp
        self.lastAccess = lastAccess
        self.badge = badge
        self.createdAt = createdAt
    }
}

/// An MPN subscription as stored. `notificationFormat` and `trigger` are kept normalized
/// (named arguments turned into indexed ones), as clients read them back.
public struct MPNSubscriptionRecord: Sendable, Hashable {
    public var id: String
    public var deviceId: String
    public var adapterSet: String
    public var dataAdapter: String
    /// `LS_group` as requested, and the item names it resolved to.
    public var group: String
    public var items: [String]
    /// `LS_schema` as requested, and the field names it resolved to.
    public var schema: String
    public var fields: [String]
    public var mode: SubscriptionMode
    public var notificationFormat: String
    public var trigger: String?
    public var bufferSize: RequestedBufferSize?
    public var maxFrequency: RequestedFrequency?
    public var status: MPNSubscriptionStatus
    public var statusTimestamp: MPNTimestamp
    public var createdAt: MPNTimestamp
    public var lastTriggerTime: MPNTimestamp?

    public init(
        id: String, deviceId: String, adapterSet: String, dataAdapter: String, group: String, items: [String],
        schema: String, fields: [String], mode: SubscriptionMode, notificationFormat: String, trigger: String?,
        bufferSize: RequestedBufferSize? = nil, maxFrequency: RequestedFrequency? = nil,
        status: MPNSubscriptionStatus = .active, statusTimestamp: MPNTimestamp, createdAt: MPNTimestamp,
        lastTriggerTime: MPNTimestamp? = nil
    ) {
        self.id = id
        self.deviceId = deviceId
        self.adapterSet = adapterSet
        self.dataAdapter = dataAdapter
        self.group = group
        self.items = items
        self.schema = schema
        self.fields = fields
        self.mode = mode
        self.notificationFormat = notificationFormat
        self.trigger = trigger
        self.bufferSize = bufferSize
        self.maxFrequency = maxFrequency
        self.status = status
        self.statusTimestamp = statusTimestamp
        self.createdAt = createdAt
        self.lastTriggerTime = lastTriggerTime
    }
}
