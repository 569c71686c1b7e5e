/// Delegate protocols of the MPN API (docs/protocol/CLIENT-API.md §11, §13). Not class-bound, as in
/// the official API; every method is required. Events arrive on the client's serial callback queue.

/// Receives the events of an `MPNDevice`.
public protocol MPNDeviceDelegate {
    func mpnDeviceDidAddDelegate(_ device: MPNDevice)
    func mpnDeviceDidRemoveDelegate(_ device: MPNDevice)
    func mpnDeviceDidRegister(_ device: MPNDevice)
    func mpnDeviceDidSuspend(_ device: MPNDevice)
    func mpnDeviceDidResume(_ device: MPNDevice)
    func mpnDevice(_ device: MPNDevice, didFailRegistrationWithErrorCode code: Int, message: String?)
    func mpnDevice(_ device: MPNDevice, didChangeStatus status: MPNDevice.Status, timestamp: Int64)
    func mpnDeviceDidUpdateSubscriptions(_ device: MPNDevice)
    func mpnDeviceDidResetBadge(_ device: MPNDevice)
    func mpnDevice(_ device: MPNDevice, didFailBadgeResetWithErrorCode code: Int, message: String?)
}

/// Receives the events of an `MPNSubscription`.
public protocol MPNSubscriptionDelegate {
    func mpnSubscriptionDidAddDelegate(_ subscription: MPNSubscription)
    func mpnSubscriptionDidRemoveDelegate(_ subscription: MPNSubscription)
    func mpnSubscriptionDidSubscribe(_ subscription: MPNSubscription)
    func mpnSubscriptionDidUnsubscribe(_ subscription: MPNSubscription)
    func mpnSubscription(_ subscription: MPNSubscription, didFailSubscriptionWithErrorCode code: Int, message: String?)
    func mpnSubscription(_ subscription: MPNSubscription, didFailUnsubscriptionWithErrorCode code: Int, message: String?)
    func mpnSubscriptionDidTrigger(_ subscription: MPNSubscription)
    func mpnSubscription(_ subscription: MPNSubscription, didChangeStatus status: MPNSubscription.Status, timestamp: Int64)
    func mpnSubscription(_ subscription: MPNSubscription, didChangeProperty property: String)
    func mpnSubscription(_ subscription: MPNSubscription, didFailModificationWithErrorCode code: Int, message: String?, property: String)
}
