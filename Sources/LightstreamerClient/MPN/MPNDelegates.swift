/// Delegate protocols of the MPN API (docs/protocol/CLIENT-API.md §11, §13). Not class-bound, as in
/// the official API; every method is required. Events arrive on the client's serial callback queue.

/// Receives the events of an `MPNDevice`.
public protocol MPNDeviceDelegate {
    /// This delegate was added to `device`.
    func mpnDeviceDidAddDelegate(_ device: MPNDevice)
    /// This delegate was removed from `device`.
    func mpnDeviceDidRemoveDelegate(_ device: MPNDevice)
    /// The server registered the device; `deviceId` is set.
    func mpnDeviceDidRegister(_ device: MPNDevice)
    /// The server suspended the device (for instance its token was refused by the push service).
    func mpnDeviceDidSuspend(_ device: MPNDevice)
    /// The server resumed the suspended device.
    func mpnDeviceDidResume(_ device: MPNDevice)
    /// The server refused the registration with `code` and `message`.
    func mpnDevice(_ device: MPNDevice, didFailRegistrationWithErrorCode code: Int, message: String?)
    /// The device's status changed; `timestamp` is the server's, in milliseconds.
    func mpnDevice(_ device: MPNDevice, didChangeStatus status: MPNDevice.Status, timestamp: Int64)
    /// The list of the device's MPN subscriptions known to the client changed.
    func mpnDeviceDidUpdateSubscriptions(_ device: MPNDevice)
    /// The server reset the device's badge.
    func mpnDeviceDidResetBadge(_ device: MPNDevice)
    /// The server refused to reset the badge, with `code` and `message`.
    func mpnDevice(_ device: MPNDevice, didFailBadgeResetWithErrorCode code: Int, message: String?)
}

/// Receives the events of an `MPNSubscription`.
public protocol MPNSubscriptionDelegate {
    /// This delegate was added to `subscription`.
    func mpnSubscriptionDidAddDelegate(_ subscription: MPNSubscription)
    /// This delegate was removed from `subscription`.
    func mpnSubscriptionDidRemoveDelegate(_ subscription: MPNSubscription)
    /// The server accepted the activation; `subscriptionId` is set.
    func mpnSubscriptionDidSubscribe(_ subscription: MPNSubscription)
    /// The subscription was deactivated.
    func mpnSubscriptionDidUnsubscribe(_ subscription: MPNSubscription)
    /// The server refused the activation with `code` and `message`.
    func mpnSubscription(_ subscription: MPNSubscription, didFailSubscriptionWithErrorCode code: Int, message: String?)
    /// The server refused the deactivation with `code` and `message`.
    func mpnSubscription(_ subscription: MPNSubscription, didFailUnsubscriptionWithErrorCode code: Int, message: String?)
    /// The trigger held: the notification was sent and the subscription is `TRIGGERED`.
    func mpnSubscriptionDidTrigger(_ subscription: MPNSubscription)
    /// The subscription's status changed; `timestamp` is the server's, in milliseconds.
    func mpnSubscription(_ subscription: MPNSubscription, didChangeStatus status: MPNSubscription.Status, timestamp: Int64)
    /// A property changed, locally or as the server reported it; `property` is its name (for|instance `trigger` or `notification_format`).
    func mpnSubscription(_ subscription: MPNSubscription, didChangeProperty property: String)
    /// The server refused a change of `property` with `code` and `message`.
    func mpnSubscription(_ subscription: MPNSubscription, didFailModificationWithErrorCode code: Int, message: String?, property: String)
}
