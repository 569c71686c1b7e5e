/// The Data Adapter API: the source of item data. An adapter is told which items the server
/// needs (`subscribe`/`unsubscribe`) and pushes their events to the listener it was given.
///
/// Threading: the engine calls `subscribe`/`unsubscribe` for a given item strictly in turn
/// (never two calls for one item at the same time). The listener may be called from any thread
/// or task, at any time after `subscribe` started, until `unsubscribe` returned.
public protocol DataAdapter: AnyObject, Sendable {
    /// Called once, before any subscription, with the listener to push events to.
    func setListener(_ listener: any ItemEventListener)
    /// Starts producing events for `item`. Throwing refuses the subscription
    /// (`DataAdapterError.subscription` → REQERR/subscription error to the client).
    func subscribe(item: String) async throws
    /// Stops producing events for `item`.
    func unsubscribe(item: String) async
    /// Whether the adapter sends a snapshot for `item` (events flagged `isSnapshot` followed by
    /// `endOfSnapshot`). When false, the engine builds snapshots from the live events alone.
    func isSnapshotAvailable(item: String) -> Bool
}

/// Where a Data Adapter sends item events.
public protocol ItemEventListener: Sendable {
    /// An update for `item`: field name → value (nil is null). Fields left out are unchanged
    /// (MERGE) or null (other modes). `isSnapshot` marks snapshot events.
    ///
    /// It may wait: when the event loops fall far behind the updates, the calling thread hands
    /// what waits over to the sessions itself, or waits while a loop does (the producer slows
    /// down rather than the server's memory growing). Call the listener from a thread or
    /// queue of your own rather than from tasks on the Swift concurrency pool, whose few
    /// threads the server's own async work (creating sessions, Metadata Adapter calls) needs.
    func update(item: String, fields: [String: String?], isSnapshot: Bool)
    /// Several updates at once, in order: the same as one `update(item:fields:isSnapshot:)`
    /// each, but the server hands them to its sessions together, so that a session's updates
    /// of one burst (a tick of a feed, the lines of one read) leave in one write. An adapter
    /// that produces updates in bursts should use it. The default calls `update` for each.
    func update(_ batch: [ItemUpdateEvent])
    /// The snapshot of `item` is complete.
    func endOfSnapshot(item: String)
    /// The adapter cleared the state of `item` (CS for DISTINCT/COMMAND; nulls for MERGE).
    func clearSnapshot(item: String)
    /// The adapter failed; the engine logs it.
    func failure(_ error: any Error)
}

extension ItemEventListener {
    public func update(_ batch: [ItemUpdateEvent]) {
        for u in batch { update(item: u.item, fields: u.fields, isSnapshot: u.isSnapshot) }
    }
}

/// One update of a batch (`ItemEventListener.update(_:)`).
public struct ItemUpdateEvent: Sendable {
    /// The item's name.
    public var item: String
    /// Field name → value (nil is null), as in `ItemEventListener.update(item:fields:isSnapshot:)`.
    public var fields: [String: String?]
    /// A snapshot event.
    public var isSnapshot: Bool

    public init(item: String, fields: [String: String?], isSnapshot: Bool = false) {
        self.item = item
        self.fields = fields
        self.isSnapshot = isSnapshot
    }
}

/// A failure a Data Adapter reports, with what the client sees.
public enum DataAdapterError: Error, Sendable, Equatable {
    /// The item cannot be subscribed (the client sees a subscription error).
    case subscription(String)
    /// The adapter does not work (the client sees a server error).
    case failure(String)
}
