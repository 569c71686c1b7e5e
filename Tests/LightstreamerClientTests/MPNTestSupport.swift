import Foundation
import TLCP

@testable import LightstreamerClient

/// How long the MPN tests wait for an expected event.
let mpnTestWaitSeconds: Int64 = 30

/// A transport that records what the client sends and lets a test inject server lines.
final class MPNFakeTransport: TransportFactory, @unchecked Sendable {
    final class Connection: TransportConnection, @unchecked Sendable {
        let transport: MPNFakeTransport
        let events: @Sendable (TransportEvent) -> Void
        init(_ t: MPNFakeTransport, _ e: @escaping @Sendable (TransportEvent) -> Void) {
            transport = t
            events = e
        }
        func send(_ text: String) { transport.record(text) }
        func close() {}
    }

    private let lock = NSLock()
    private var sent: [String] = []
    private var webSocket: Connection?

    func openWebSocket(url: String, headers: [String: String], events: @escaping @Sendable (TransportEvent) -> Void) -> TransportConnection
    {
        let c = Connection(self, events)
        lock.withLock { webSocket = c }
        events(.opened)
        return c
    }

    func post(
        url: String, body: String, headers: [String: String], events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        record("http " + body)
        return Connection(self, events)
    }

    func record(_ text: String) {
        lock.withLock { sent.append(text.replacingOccurrences(of: "\r\n", with: "|")) }
    }

    /// Server lines on the WebSocket.
    func receive(_ lines: String...) {
        lock.withLock { webSocket }?.events(.lines(lines))
    }

    func clear() {
        lock.withLock { sent.removeAll() }
    }

    func failSocket() {
        lock.withLock { webSocket }?.events(.failed("test"))
    }

    /// Waits (polling, at most `mpnTestWaitSeconds`) until the client has sent a message containing `part`;
    /// returns every message sent since the last `takeControls()`.
    func waitFor(_ part: String) async -> [String] {
        // A deadline rather than a number of rounds: under a loaded machine (the whole suite on
        // two cores) the client may take seconds; a passing wait returns at once anyway.
        let deadline = ContinuousClock.now + .seconds(mpnTestWaitSeconds)
        while ContinuousClock.now < deadline {
            let all = lock.withLock { sent }
            if all.contains(where: { $0.contains(part) }) { return all }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return lock.withLock { sent }
    }

    /// The control parameter lines sent so far (each WS message split in lines).
    func takeControls() -> [String] {
        lock.withLock {
            defer { sent.removeAll() }
            return sent.flatMap { m -> [String] in
                let parts = m.split(separator: "|").map(String.init)
                return parts.first == "control" ? Array(parts.dropFirst()) : []
            }
        }
    }
}

/// Collects delegate events as strings.
final class MPNEventLog: MPNDeviceDelegate, MPNSubscriptionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []

    func add(_ e: String) { lock.withLock { events.append(e) } }
    var all: [String] { lock.withLock { events } }

    /// Waits until `count` events containing `part` arrived (at most `mpnTestWaitSeconds`).
    func waitFor(_ part: String, count: Int = 1) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(mpnTestWaitSeconds)
        while ContinuousClock.now < deadline {
            if all.filter({ $0.contains(part) }).count >= count { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return false
    }

    func mpnDeviceDidAddDelegate(_ device: MPNDevice) {}
    func mpnDeviceDidRemoveDelegate(_ device: MPNDevice) {}
    func mpnDeviceDidRegister(_ device: MPNDevice) { add("registered \(device.deviceId ?? "-")") }
    func mpnDeviceDidSuspend(_ device: MPNDevice) { add("suspended") }
    func mpnDeviceDidResume(_ device: MPNDevice) { add("resumed") }
    func mpnDevice(_ device: MPNDevice, didFailRegistrationWithErrorCode code: Int, message: String?) { add("registrationFailed \(code)") }
    func mpnDevice(_ device: MPNDevice, didChangeStatus status: MPNDevice.Status, timestamp: Int64) { add("device \(status) \(timestamp)") }
    func mpnDeviceDidUpdateSubscriptions(_ device: MPNDevice) { add("subscriptionsUpdated") }
    func mpnDeviceDidResetBadge(_ device: MPNDevice) { add("badgeReset") }
    func mpnDevice(_ device: MPNDevice, didFailBadgeResetWithErrorCode code: Int, message: String?) { add("badgeResetFailed \(code)") }

    func mpnSubscriptionDidAddDelegate(_ subscription: MPNSubscription) {}
    func mpnSubscriptionDidRemoveDelegate(_ subscription: MPNSubscription) {}
    func mpnSubscriptionDidSubscribe(_ subscription: MPNSubscription) { add("subscribed \(subscription.subscriptionId ?? "-")") }
    func mpnSubscriptionDidUnsubscribe(_ subscription: MPNSubscription) { add("unsubscribed") }
    func mpnSubscription(_ subscription: MPNSubscription, didFailSubscriptionWithErrorCode code: Int, message: String?) {
        add("subscriptionFailed \(code)")
    }
    func mpnSubscription(_ subscription: MPNSubscription, didFailUnsubscriptionWithErrorCode code: Int, message: String?) {
        add("unsubscriptionFailed \(code)")
    }
    func mpnSubscriptionDidTrigger(_ subscription: MPNSubscription) { add("triggered") }
    func mpnSubscription(_ subscription: MPNSubscription, didChangeStatus status: MPNSubscription.Status, timestamp: Int64) {
        add("status \(status) \(timestamp)")
    }
    func mpnSubscription(_ subscription: MPNSubscription, didChangeProperty property: String) { add("property \(property)") }
    func mpnSubscription(_ subscription: MPNSubscription, didFailModificationWithErrorCode code: Int, message: String?, property: String) {
        add("modificationFailed \(code) \(property)")
    }
}

/// A token store in a fresh temporary directory.
func temporaryTokenStore() -> MPNTokenStore {
    MPNTokenStore(directory: FileManager.default.temporaryDirectory.appendingPathComponent("mpn-tests-\(UUID().uuidString)"))
}
