import TLCP

extension MPNEngine {
    /// Events for `MPNSubscriptionDelegate`.
    enum SubscriptionEvent: Sendable, Equatable {
        case subscribed
        case unsubscribed
        case subscriptionFailed(code: Int, message: String?)
        case unsubscriptionFailed(code: Int, message: String?)
        case triggered
        case status(MPNSubscription.Status, timestamp: Int64)
        case property(String)
        case modificationFailed(code: Int, message: String?, property: String)

        func deliver(to d: MPNSubscriptionDelegate, _ s: MPNSubscription) {
            switch self {
            case .subscribed: d.mpnSubscriptionDidSubscribe(s)
            case .unsubscribed: d.mpnSubscriptionDidUnsubscribe(s)
            case .subscriptionFailed(let c, let m): d.mpnSubscription(s, didFailSubscriptionWithErrorCode: c, message: m)
            case .unsubscriptionFailed(let c, let m): d.mpnSubscription(s, didFailUnsubscriptionWithErrorCode: c, message: m)
            case .triggered: d.mpnSubscriptionDidTrigger(s)
            case .status(let st, let ts): d.mpnSubscription(s, didChangeStatus: st, timestamp: ts)
            case .property(let p): d.mpnSubscription(s, didChangeProperty: p)
            case .modificationFailed(let c, let m, let p):
                d.mpnSubscription(s, didFailModificationWithErrorCode: c, message: m, property: p)
            }
        }
    }
}
