import TLCP

extension MPNEngine {
    /// Events into the MPN engine.
    enum Event: Sendable {
        /// `register(forMPN:)`; `sessionAvailable` tells whether a session exists now.
        case register(DeviceInfo, sessionAvailable: Bool)
        case sessionStarted(id: String)
        /// The session ended: the device is no longer registered in a session.
        case sessionEnded
        /// A request did not outlive its session; `sent`: it went on the network.
        case dropped(token: Int, sent: Bool)
        /// The `LS_subId` an activation got when the session engine built it.
        case subscriptionIdAssigned(token: Int, subscriptionId: Int)
        case notification(TLCPNotification)
        case reply(token: Int, code: Int?, message: String?)
        case subscribe(key: Int, MPNRequest, coalescing: Bool)
        case unsubscribe(key: Int)
        case unsubscribeFilter(LightstreamerClient.MPNSubscriptionStatus)
        case modify(key: Int, Modification)
        case resetBadge
        /// An update of the `DEV-<id>` item.
        case deviceItem(status: String?, timestamp: String?)
        /// An update of the `SUBS-<id>` item: `key` is `SUB-<mpnId>`; `values` holds the
        /// second-level fields, when they came.
        case subscriptionsItem(key: String, command: String?, values: [String: String?])
        case subscriptionsEndOfSnapshot
        /// The `SUBS-` subscription was confirmed (SUBCMD): a snapshot follows.
        case subscriptionsItemSubscribed
        /// An internal subscription failed (error 62 for the device).
        case internalFailed(code: Int, message: String?)
    }
}
