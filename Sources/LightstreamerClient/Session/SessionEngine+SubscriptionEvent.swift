import TLCP

extension SessionEngine {
    /// Subscription events for the application.
    enum SubscriptionEvent: Sendable {
        case subscribed(itemCount: Int, fieldCount: Int, keyPosition: Int?, commandPosition: Int?)
        case unsubscribed
        case failed(code: Int, message: String?)
        case update(ItemUpdateValue)
        case endOfSnapshot(itemName: String?, itemPos: Int)
        case clearSnapshot(itemName: String?, itemPos: Int)
        case lostUpdates(itemName: String?, itemPos: Int, count: Int)
        case realFrequency(RealMaxFrequency?)
        case secondLevelFailed(key: String, code: Int, message: String?)
        case secondLevelLostUpdates(key: String, count: Int)
    }
}
