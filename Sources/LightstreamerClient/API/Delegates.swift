/// Delegate protocols of the public API (docs/protocol/CLIENT-API.md §3, §4, §8). Every method is
/// required, as in the official API. All callbacks of one client arrive on one serial queue.

/// Receives the events of a `LightstreamerClient`.
public protocol ClientDelegate: AnyObject {
    func clientDidRemoveDelegate(_ client: LightstreamerClient)
    func clientDidAddDelegate(_ client: LightstreamerClient)
    /// The session was refused or closed by the server (or error 61/62 raised locally). The
    /// status is already `DISCONNECTED` (or `DISCONNECTED:WILL-RETRY` when the client recovers on
    /// its own from a malformed server line) when this fires.
    func client(_ client: LightstreamerClient, didReceiveServerError errorCode: Int, withMessage errorMessage: String)
    func client(_ client: LightstreamerClient, didChangeStatus status: LightstreamerClient.Status)
    func client(_ client: LightstreamerClient, didChangeProperty property: String)
}

/// Receives the outcome of one message sent with `sendMessage`: exactly one of the outcome
/// methods is called per message.
public protocol ClientMessageDelegate: AnyObject {
    func client(_ client: LightstreamerClient, didAbortMessage originalMessage: String, sentOnNetwork: Bool)
    func client(_ client: LightstreamerClient, didDenyMessage originalMessage: String, withCode code: Int, error: String)
    func client(_ client: LightstreamerClient, didDiscardMessage originalMessage: String)
    func client(_ client: LightstreamerClient, didFailMessage originalMessage: String)
    func client(_ client: LightstreamerClient, didProcessMessage originalMessage: String, withResponse response: String)
}

/// Receives the events of a `Subscription`.
public protocol SubscriptionDelegate: AnyObject {
    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt)
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String)
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String)
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt)
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt)
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate)
    func subscriptionDidRemoveDelegate(_ subscription: Subscription)
    func subscriptionDidAddDelegate(_ subscription: Subscription)
    func subscriptionDidSubscribe(_ subscription: Subscription)
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?)
    func subscriptionDidUnsubscribe(_ subscription: Subscription)
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?)
}
