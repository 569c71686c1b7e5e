/// Delegate protocols of the public API (docs/protocol/CLIENT-API.md §3, §4, §8). Every method is
/// required, as in the official API. All callbacks of one client arrive on one serial queue.

/// Receives the events of a `LightstreamerClient`.
public protocol ClientDelegate: AnyObject {
    /// This delegate was removed from `client`.
    func clientDidRemoveDelegate(_ client: LightstreamerClient)
    /// This delegate was added to `client`.
    func clientDidAddDelegate(_ client: LightstreamerClient)
    /// The session was refused or closed by the server (or error 61/62 raised locally). The
    /// status is already `DISCONNECTED` (or `DISCONNECTED:WILL-RETRY` when the client recovers on
    /// its own from a malformed server line) when this fires.
    func client(_ client: LightstreamerClient, didReceiveServerError errorCode: Int, withMessage errorMessage: String)
    /// The client's status changed to `status`.
    func client(_ client: LightstreamerClient, didChangeStatus status: LightstreamerClient.Status)
    /// A property of `ConnectionDetails` or `ConnectionOptions` changed, by the application or
    /// by the server; `property` is its name.
    func client(_ client: LightstreamerClient, didChangeProperty property: String)
}

/// Receives the outcome of one message sent with `sendMessage`: exactly one of the outcome
/// methods is called per message.
public protocol ClientMessageDelegate: AnyObject {
    /// The message was aborted by the client (for instance on disconnection) before an outcome
    /// was known; `sentOnNetwork` tells whether it may have reached the server.
    func client(_ client: LightstreamerClient, didAbortMessage originalMessage: String, sentOnNetwork: Bool)
    /// The server's Metadata Adapter refused the message with `code` and `error`.
    func client(_ client: LightstreamerClient, didDenyMessage originalMessage: String, withCode code: Int, error: String)
    /// The server discarded the message without processing it (`MSGFAIL` 38 or 39).
    func client(_ client: LightstreamerClient, didDiscardMessage originalMessage: String)
    /// The server answered the message with an error other than a denial or a discard.
    func client(_ client: LightstreamerClient, didFailMessage originalMessage: String)
    /// The server processed the message; `response` is the Metadata Adapter's answer (empty
    /// when it gave none).
    func client(_ client: LightstreamerClient, didProcessMessage originalMessage: String, withResponse response: String)
}

/// Receives the events of a `Subscription`.
public protocol SubscriptionDelegate: AnyObject {
    /// The server cleared the item's state: a DISTINCT or COMMAND item's held values should
    /// be dropped.
    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt)
    /// Updates of the second-level item for `key` (COMMAND two-level subscriptions) were lost.
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String)
    /// The second-level subscription for `key` (COMMAND two-level subscriptions) failed.
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String)
    /// The item's snapshot is complete: updates from now on are live ones.
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt)
    /// The server dropped `lostUpdates` updates of the item (its buffer was full).
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt)
    /// An update of one item.
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate)
    /// This delegate was removed from `subscription`.
    func subscriptionDidRemoveDelegate(_ subscription: Subscription)
    /// This delegate was added to `subscription`.
    func subscriptionDidAddDelegate(_ subscription: Subscription)
    /// The server accepted the subscription.
    func subscriptionDidSubscribe(_ subscription: Subscription)
    /// The server refused the subscription, or it failed, with `code` and `message`.
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?)
    /// The subscription ended: unsubscribed, or its session closed.
    func subscriptionDidUnsubscribe(_ subscription: Subscription)
    /// The server told the frequency limit it applies to the subscription.
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?)
}
