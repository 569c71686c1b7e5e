/// A running subscription in the `ItemEngine`. Two handles are equal when they name the same
/// subscription; the other properties describe it for the session (`SUBOK`/`SUBCMD`).
public struct TableHandle: Sendable, Hashable, CustomStringConvertible {
    /// Unique within one engine.
    public let id: UInt64
    /// The subscription mode.
    public let mode: SubscriptionMode
    /// How many items the subscription has.
    public let itemCount: Int
    /// How many fields the subscription has.
    public let fieldCount: Int
    /// 1-based positions of the `key` and `command` fields (COMMAND mode only).
    public let keyPosition: Int?
    /// The 1-based position of the `command` field (COMMAND mode only).
    public let commandPosition: Int?
    /// `unfiltered` was requested (CONF's third argument).
    public let isUnfiltered: Bool

    init(
        id: UInt64, mode: SubscriptionMode, itemCount: Int, fieldCount: Int, keyPosition: Int?,
        commandPosition: Int?, isUnfiltered: Bool
    ) {
        self.id = id
        self.mode = mode
        self.itemCount = itemCount
        self.fieldCount = fieldCount
        self.keyPosition = keyPosition
        self.commandPosition = commandPosition
        self.isUnfiltered = isUnfiltered
    }

    /// Whether both handles name the same subscription.
    public static func == (a: TableHandle, b: TableHandle) -> Bool { a.id == b.id }
    /// Hashes the subscription's id.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    /// `table#<id>`.
    public var description: String { "table#\(id)" }
}

/// A refused engine request, with the TLCP code (Appendix B, docs/protocol/TLCP.md §4.2) the client
/// should see.
public struct ItemEngineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The TLCP error code.
    public var code: Int
    /// The error message.
    public var message: String

    /// An error with its code and message.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// `<code>: <message>`.
    public var description: String { "\(code): \(message)" }

    static func badDataAdapter(_ name: String) -> Self { .init(code: 17, message: "Data Adapter \(name) not found") }
    static func badAdapterSet(_ name: String) -> Self { .init(code: 17, message: "Adapter Set \(name) not found") }
    static func modeNotAllowed(_ mode: SubscriptionMode, _ item: String) -> Self {
        .init(code: 24, message: "Mode \(mode.rawValue) not allowed for item \(item)")
    }
    static func badSelector(_ why: String) -> Self { .init(code: 25, message: "Bad selector: \(why)") }
    static let noKeyField = Self(code: 15, message: "COMMAND schema has no key field")
    static let noCommandField = Self(code: 16, message: "COMMAND schema has no command field")
    static func unfilteredNotAllowed(_ item: String) -> Self {
        .init(code: 26, message: "Unfiltered dispatching not allowed for item \(item) (frequency limit)")
    }
    static let reconfUnfiltered = Self(code: 13, message: "Frequency of an unfiltered subscription cannot change")
    static let subscriptionNotFound = Self(code: 19, message: "Subscription not found")
    static let badValue = Self(code: 65, message: "Bad value")
    static let shutDown = Self(code: 68, message: "Item engine shut down")
}
