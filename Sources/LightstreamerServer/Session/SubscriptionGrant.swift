import TLCP

/// What the Metadata Adapter and item engine granted for one `add`.
public struct SubscriptionGrant: Sendable, Hashable {
    /// How many items the subscription has.
    public var itemCount: Int
    /// How many fields the subscription has.
    public var fieldCount: Int
    /// 1-based; COMMAND mode only.
    public var keyPosition: Int?
    /// 1-based position of the `command` field; COMMAND mode only.
    public var commandPosition: Int?
    /// The frequency limit granted (sent to the client in `CONF`).
    public var maxFrequency: GrantedFrequency
    /// False for `unfiltered` subscriptions (and RAW).
    public var filtered: Bool

    /// A grant with its properties.
    public init(
        itemCount: Int, fieldCount: Int, keyPosition: Int? = nil, commandPosition: Int? = nil,
        maxFrequency: GrantedFrequency = .unlimited, filtered: Bool = true
    ) {
        self.itemCount = itemCount
        self.fieldCount = fieldCount
        self.keyPosition = keyPosition
        self.commandPosition = commandPosition
        self.maxFrequency = maxFrequency
        self.filtered = filtered
    }
}
