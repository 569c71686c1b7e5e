import Foundation
import LightstreamerClient

/// The MPN side of one soak client: its device (Apple platform, random hex token) and the MPN
/// subscriptions it activates. Records what the server acknowledged: the device id, the ids of
/// the subscriptions subscribed and of those that triggered, and every failure code.
/// `@unchecked Sendable`: its figures are only read and written under `lock`.
final class MPNProbe: MPNDeviceDelegate, MPNSubscriptionDelegate, @unchecked Sendable {
    struct Figures: Sendable {
        var registrations = 0
        var deviceId: String?
        var subscribed: Set<String> = []
        var triggered: Set<String> = []
        var requested = 0
        var failures: [String] = []
    }

    static let applicationId = "com.lightstreamer.soak"

    let device: MPNDevice
    private let lock = NSLock()
    private var figures = Figures()

    init() {
        let token = (0..<32).map { _ in String(format: "%02x", Int.random(in: 0..<256)) }.joined()
        // No token store: nothing is written under the user's home directory.
        device = MPNDevice(deviceToken: token, applicationId: Self.applicationId, platform: "Apple", tokenStore: nil)
        device.addDelegate(self)
    }

    var snapshot: Figures { lock.withLock { figures } }
    var isRegistered: Bool { lock.withLock { figures.deviceId != nil } }

    /// A subscription notified at every update of `item` (the server paces them per device).
    func tickerSubscription(item: String, field: String) -> MPNSubscription {
        let sub = MPNSubscription(subscriptionMode: .MERGE, item: item, fields: [field])
        sub.notificationFormat = MPNBuilder().alert("\(item) is ${\(field)}").build()
        return prepared(sub)
    }

    /// A subscription that triggers (once) when the counter reaches `threshold`.
    func triggerSubscription(threshold: Int) -> MPNSubscription {
        let sub = MPNSubscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
        sub.notificationFormat = MPNBuilder().alert("counter reached ${count}").build()
        sub.triggerExpression = "Integer.parseInt(${count}) >= \(threshold)"
        return prepared(sub)
    }

    private func prepared(_ sub: MPNSubscription) -> MPNSubscription {
        sub.addDelegate(self)
        lock.withLock { figures.requested += 1 }
        return sub
    }

    private func fail(_ s: String) { lock.withLock { figures.failures.append(s) } }

    // MARK: MPNDeviceDelegate

    func mpnDeviceDidRegister(_ device: MPNDevice) {
        lock.withLock {
            figures.registrations += 1
            figures.deviceId = device.deviceId
        }
    }

    func mpnDevice(_ device: MPNDevice, didFailRegistrationWithErrorCode code: Int, message: String?) {
        fail("registration \(code) \(message ?? "")")
    }

    func mpnDeviceDidAddDelegate(_ device: MPNDevice) {}
    func mpnDeviceDidRemoveDelegate(_ device: MPNDevice) {}
    func mpnDeviceDidSuspend(_ device: MPNDevice) { fail("device suspended") }
    func mpnDeviceDidResume(_ device: MPNDevice) {}
    func mpnDevice(_ device: MPNDevice, didChangeStatus status: MPNDevice.Status, timestamp: Int64) {}
    func mpnDeviceDidUpdateSubscriptions(_ device: MPNDevice) {}
    func mpnDeviceDidResetBadge(_ device: MPNDevice) {}
    func mpnDevice(_ device: MPNDevice, didFailBadgeResetWithErrorCode code: Int, message: String?) {}

    // MARK: MPNSubscriptionDelegate

    func mpnSubscriptionDidSubscribe(_ subscription: MPNSubscription) {
        guard let id = subscription.subscriptionId else { return }
        lock.withLock { _ = figures.subscribed.insert(id) }
    }

    func mpnSubscriptionDidTrigger(_ subscription: MPNSubscription) {
        guard let id = subscription.subscriptionId else { return }
        lock.withLock { _ = figures.triggered.insert(id) }
    }

    func mpnSubscription(_ subscription: MPNSubscription, didFailSubscriptionWithErrorCode code: Int, message: String?) {
        fail("subscription \(code) \(message ?? "")")
    }

    func mpnSubscriptionDidUnsubscribe(_ subscription: MPNSubscription) {}
    func mpnSubscriptionDidAddDelegate(_ subscription: MPNSubscription) {}
    func mpnSubscriptionDidRemoveDelegate(_ subscription: MPNSubscription) {}
    func mpnSubscription(_ subscription: MPNSubscription, didFailUnsubscriptionWithErrorCode code: Int, message: String?) {}
    func mpnSubscription(_ subscription: MPNSubscription, didChangeStatus status: MPNSubscription.Status, timestamp: Int64) {}
    func mpnSubscription(_ subscription: MPNSubscription, didChangeProperty property: String) {}
    func mpnSubscription(_ subscription: MPNSubscription, didFailModificationWithErrorCode code: Int, message: String?, property: String) {}
}
