import TLCP

extension MPNEngine {
    /// Actions out of the MPN engine.
    enum Action: Sendable, Equatable {
        case send(token: Int, ControlOperation, cause: String?)
        /// Subscribe `DEV-<deviceId>` and `SUBS-<deviceId>` on the MPN adapter.
        case subscribeInternal(deviceId: String, adapter: String)
        case unsubscribeInternal
        case deviceState(MPNDevice.Status, timestamp: Int64?, deviceId: String?)
        case deviceEvent(DeviceEvent)
        /// A server-made subscription appeared: the runtime creates its object.
        case createSubscription(key: Int)
        case removeSubscription(key: Int)
        case subscriptionState(key: Int, SubscriptionState)
        case subscriptionEvents(key: Int, [SubscriptionEvent])
    }
}
