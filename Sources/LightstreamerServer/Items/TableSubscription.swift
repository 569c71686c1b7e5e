/// The boundary between server sessions and the item engine.
///
/// A session resolves a client's `add` request (through the Metadata Adapter) into a
/// `TableSpec`, then asks the engine for a subscription. The engine delivers that
/// subscription's events to the sink, in order, already shaped for this one subscription
/// (snapshot per the request, frequency limit and conflation, buffer, selector, OV on loss),
/// as full field-value rows in schema order. The session turns them into `U`/`EOS`/`CS`/`OV`
/// lines with `UpdateCodec` against the last row it sent for that item.

/// What a session subscribes to.
public struct TableSpec: Sendable, Hashable {
    /// The adapter set's name.
    public var adapterSet: String
    /// The Data Adapter's name within the set.
    public var dataAdapter: String
    /// The subscription mode.
    public var mode: SubscriptionMode
    /// The item names, resolved by the Metadata Adapter.
    public var items: [String]
    /// The field names, resolved by the Metadata Adapter.
    public var fields: [String]
    /// The selector the client asked for, if any.
    public var selector: String?
    /// The snapshot the client asked for.
    public var snapshot: SnapshotRequest
    /// Already clamped by the Metadata Adapter's limit.
    public var maxFrequency: RequestedFrequency
    /// nil: the mode's default (1 for MERGE, unlimited for DISTINCT).
    public var bufferSize: RequestedBufferSize?
    /// 1-based positions of `key` and `command` in `fields` (COMMAND mode).
    public var keyPosition: Int?
    /// The 1-based position of `command` in `fields` (COMMAND mode).
    public var commandPosition: Int?

    /// A subscription request with its properties.
    public init(
        adapterSet: String, dataAdapter: String, mode: SubscriptionMode, items: [String], fields: [String],
        selector: String? = nil, snapshot: SnapshotRequest = .no, maxFrequency: RequestedFrequency = .unlimited,
        bufferSize: RequestedBufferSize? = nil, keyPosition: Int? = nil, commandPosition: Int? = nil
    ) {
        self.adapterSet = adapterSet
        self.dataAdapter = dataAdapter
        self.mode = mode
        self.items = items
        self.fields = fields
        self.selector = selector
        self.snapshot = snapshot
        self.maxFrequency = maxFrequency
        self.bufferSize = bufferSize
        self.keyPosition = keyPosition
        self.commandPosition = commandPosition
    }
}

/// One event for one subscription. `item` is 1-based, as on the wire.
public enum TableEvent: Sendable, Hashable {
    /// A full row in schema order (nil = null).
    case update(item: Int, values: [String?], isSnapshot: Bool)
    /// The item's snapshot is complete.
    case endOfSnapshot(item: Int)
    /// The item's state was cleared.
    case clearSnapshot(item: Int)
    /// `lost` updates of the item were dropped (the client sees `OV`).
    case overflow(item: Int, lost: Int)
}

/// Receives a subscription's events. Called serially for one subscription.
public protocol TableSink: AnyObject, Sendable {
    /// One event of the subscription, in order.
    func deliver(_ event: TableEvent)
    /// Called once per subscription, on the same serial path as `deliver`, after the engine
    /// accepted the subscription and before its first event (possibly before `subscribe`
    /// returns). A session writes `SUBOK`/`SUBCMD` and `CONF` here so that they precede every
    /// `U` (docs/protocol/TLCP.md §5.8, rule 3). Default: nothing.
    func started(_ handle: TableHandle)
}

extension TableSink {
    /// Does nothing.
    public func started(_ handle: TableHandle) {}
}

/// A sink that can take the encoding an update shares with other subscriptions of the same
/// item and fields (`SharedUpdateEncoding`); the engine hands it over with each update.
protocol SharedEncodingTableSink: TableSink {
    func deliver(_ event: consuming TableEvent, shared: consuming SharedUpdateEncoding?)
}
