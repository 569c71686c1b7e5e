import Foundation
import NIOConcurrencyHelpers

/// The MPN members of `LightstreamerClient` (docs/protocol/CLIENT-API.md §2). Preconditions trap
/// with the official messages: "No MPNDevice Registered" for every member but `register(forMPN:)`;
/// `subscribeMPN` also "Cannot subscribe to an active MPNSubscription", "Specify property
/// 'notificationFormat'", "Specify property 'items' or 'itemGroup'", "Specify property 'fields' or
/// 'fieldSchema'"; `unsubscribeMPN` traps when the subscription is active on another client.
extension LightstreamerClient {
    var mpn: MPNManager { MPNRegistry.manager(for: core) }

    private func requireDevice() -> MPNManager {
        let m = mpn
        precondition(m.registeredDevice != nil, "No MPNDevice Registered")
        return m
    }

    /// Registers the device with the server's MPN Module; sent as soon as a session exists,
    /// and again (`restore.token`) on every new session. A new device object while one is
    /// registered refreshes the token (`refresh.token`).
    public func register(forMPN mpnDevice: MPNDevice) {
        mpn.register(mpnDevice)
    }

    /// Activates an MPN subscription for the registered device; sent as soon as a session exists.
    /// With `coalescing` true, an activation that matches an existing subscription of the device
    /// (same adapter set, data adapter, items, fields and trigger) modifies that one instead of
    /// adding another. The outcome reaches the subscription's delegates.
    public func subscribeMPN(_ mpnSubscription: MPNSubscription, coalescing: Bool) {
        let m = requireDevice()
        precondition(!mpnSubscription.isActive, "Cannot subscribe to an active MPNSubscription")
        let r = mpnSubscription.request
        precondition(r.format != nil, "Specify property 'notificationFormat'")
        precondition(r.group != nil, "Specify property 'items' or 'itemGroup'")
        precondition(r.schema != nil, "Specify property 'fields' or 'fieldSchema'")
        m.subscribe(mpnSubscription, coalescing: coalescing)
    }

    /// Deactivates an MPN subscription. No-op when it is not active.
    public func unsubscribeMPN(_ mpnSubscription: MPNSubscription) {
        let m = requireDevice()
        guard mpnSubscription.isActive else { return }
        precondition(
            mpnSubscription.manager == nil || mpnSubscription.manager === m,
            "The MPNSubscription is active on another client")
        m.unsubscribe(mpnSubscription)
    }

    /// nil means `.ALL`.
    public func unsubscribeMultipleMPN(_ filter: MPNSubscriptionStatus?) {
        requireDevice().unsubscribeMultiple(filter ?? .ALL)
    }

    /// The device's MPN subscriptions known to the client, subscribed and triggered ones alike.
    public var MPNSubscriptions: [MPNSubscription] { requireDevice().list(.ALL) }

    /// nil or `.ALL`: subscribed and triggered ones. One object per subscription id.
    public func filterMPNSubscriptions(_ filter: MPNSubscriptionStatus?) -> [MPNSubscription] {
        requireDevice().list(filter ?? .ALL)
    }

    /// The MPN subscription with this id among the device's, if the client knows it.
    public func findMPNSubscription(_ subscriptionId: String) -> MPNSubscription? {
        requireDevice().find(subscriptionId)
    }

    /// Asks the server to reset the badge of the registered device (Apple); the device's
    /// delegates learn the outcome.
    public func resetMPNBadge() {
        requireDevice().resetBadge()
    }
}

/// One `MPNManager` per client core, created on first use.
enum MPNRegistry {
    struct WeakCore { weak var core: ClientCore? }

    /// By core identity; entries whose core is gone are dropped when a manager is created.
    private static let managers = NIOLockedValueBox<[ObjectIdentifier: (WeakCore, MPNManager)]>([:])

    static func manager(for core: ClientCore) -> MPNManager {
        let (m, created): (MPNManager, Bool) = managers.withLockedValue { managers in
            let id = ObjectIdentifier(core)
            if let (w, m) = managers[id], w.core === core { return (m, false) }
            managers = managers.filter { $0.value.0.core != nil }
            let m = MPNManager(core: core)
            managers[id] = (WeakCore(core: core), m)
            return (m, true)
        }
        if created { m.attach() }
        return m
    }
}
