import TLCP

/// Values of an MPN subscription as the server reports them on its `SUB-<id>` item.
struct MPNServerValues: Sendable, Equatable {
    var format: String?
    var trigger: String?
    var group: String?
    var schema: String?
    var adapter: String?
    var mode: String?
    var bufferSize: String?
    var maxFrequency: String?
}

/// The engine's view of one MPN subscription object.
struct MPNSubscriptionState: Sendable, Equatable {
    var status: MPNSubscription.Status = .UNKNOWN
    var timestamp: Int64 = 0
    var id: String?
    var server: MPNServerValues?
    /// Made by the application (not discovered on the server).
    var userMade: Bool
    var request: MPNRequest?
    /// The `LS_subId` of the activation awaiting MPNOK (given by the session engine when the
    /// request is built, from the counter `add` uses).
    var activationSubId: Int?
    /// The token of the activation sent and not yet answered.
    var activationToken: Int?
    /// Changes asked while the id was not known yet, sent after MPNOK.
    var pendingFormat: String??
    var pendingTrigger: String??
    var deactivateAfterActivation = false
    /// Went UNKNOWN because the session ended, id kept: the next `SUBS-` snapshot restores it
    /// or removes it.
    var disconnected = false
}

/// Events for `MPNSubscriptionDelegate`.
enum MPNSubscriptionEvent: Sendable, Equatable {
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
        case .modificationFailed(let c, let m, let p): d.mpnSubscription(s, didFailModificationWithErrorCode: c, message: m, property: p)
        }
    }
}

/// Events for `MPNDeviceDelegate`.
enum MPNDeviceEvent: Sendable, Equatable {
    case registered
    case suspended
    case resumed
    case registrationFailed(code: Int, message: String?)
    case status(MPNDevice.Status, timestamp: Int64)
    case subscriptionsUpdated
    case badgeReset
    case badgeResetFailed(code: Int, message: String?)

    func deliver(to d: MPNDeviceDelegate, _ device: MPNDevice) {
        switch self {
        case .registered: d.mpnDeviceDidRegister(device)
        case .suspended: d.mpnDeviceDidSuspend(device)
        case .resumed: d.mpnDeviceDidResume(device)
        case .registrationFailed(let c, let m): d.mpnDevice(device, didFailRegistrationWithErrorCode: c, message: m)
        case .status(let s, let ts): d.mpnDevice(device, didChangeStatus: s, timestamp: ts)
        case .subscriptionsUpdated: d.mpnDeviceDidUpdateSubscriptions(device)
        case .badgeReset: d.mpnDeviceDidResetBadge(device)
        case .badgeResetFailed(let c, let m): d.mpnDevice(device, didFailBadgeResetWithErrorCode: c, message: m)
        }
    }
}

/// The device as the engine needs it.
struct MPNDeviceInfo: Sendable, Equatable {
    var platform: MPNPlatform
    var applicationId: String
    var token: String
    /// The stored previous token, when it differs from `token`.
    var previousToken: String?
}

/// A change asked on an active subscription.
enum MPNModification: Sendable, Equatable {
    case format(String?)
    case trigger(String?)

    var propertyName: String {
        switch self {
        case .format: return "notification_format"
        case .trigger: return "trigger"
        }
    }
}

/// Events into the MPN engine.
enum MPNEngineEvent: Sendable {
    /// `register(forMPN:)`; `sessionAvailable` tells whether a session exists now.
    case register(MPNDeviceInfo, sessionAvailable: Bool)
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
    case modify(key: Int, MPNModification)
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

/// Actions out of the MPN engine.
enum MPNEngineAction: Sendable, Equatable {
    case send(token: Int, ControlOperation, cause: String?)
    /// Subscribe `DEV-<deviceId>` and `SUBS-<deviceId>` on the MPN adapter.
    case subscribeInternal(deviceId: String, adapter: String)
    case unsubscribeInternal
    case deviceState(MPNDevice.Status, timestamp: Int64?, deviceId: String?)
    case deviceEvent(MPNDeviceEvent)
    /// A server-made subscription appeared: the runtime creates its object.
    case createSubscription(key: Int)
    case removeSubscription(key: Int)
    case subscriptionState(key: Int, MPNSubscriptionState)
    case subscriptionEvents(key: Int, [MPNSubscriptionEvent])
}
