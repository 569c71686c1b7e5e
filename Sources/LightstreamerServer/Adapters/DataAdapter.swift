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
    func update(item: String, fields: [String: String?], isSnapshot: Bool)
    /// The snapshot of `item` is complete.
    func endOfSnapshot(item: String)
    /// The adapter cleared the state of `item` (CS for DISTINCT/COMMAND; nulls for MERGE).
    func clearSnapshot(item: String)
    /// The adapter failed; the engine logs it.
    func failure(_ error: any Error)
}

/// A failure a Data Adapter reports, with what the client sees.
public enum DataAdapterError: Error, Sendable, Equatable {
    /// The item cannot be subscribed (the client sees a subscription error).
    case subscription(String)
    /// The adapter does not work (the client sees a server error).
    case failure(String)
}
