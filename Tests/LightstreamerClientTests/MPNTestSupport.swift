import Foundation
import TLCP

@testable import LightstreamerClient

/// How long the MPN tests wait for an expected event.
let mpnTestWaitSeconds: Int64 = 30

/// The time one test's waits share. A wait that runs out marks the test failed, and every
/// later wait of that test returns at once: a broken script then fails in 30 s, not in 30 s
/// per remaining step.
final class MPNWaitBudget: @unchecked Sendable {
    private let lock = NSLock()
    private var exhausted = false

    /// Polls `condition` every 10 ms until it holds or the budget is gone; false then.
    func wait(until condition: () -> Bool) async -> Bool {
        if condition() { return true }
        if lock.withLock({ exhausted }) { return false }
        let deadline = ContinuousClock.now + .seconds(mpnTestWaitSeconds)
        while ContinuousClock.now < deadline {
            try? await Task.sleep(nanoseconds: 10_000_000)
            if condition() { return true }
        }
        lock.withLock { exhausted = true }
        return false
    }
}

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
    let budget: MPNWaitBudget

    init(budget: MPNWaitBudget = MPNWaitBudget()) { self.budget = budget }

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

    /// Waits (polling, within the test's `budget`) until the client has sent a message
    /// containing `part`; returns every message sent since the last `takeControls()`.
    func waitFor(_ part: String) async -> [String] {
        // A deadline rather than a number of rounds: under a loaded machine (the whole suite on
        // two cores) the client may take seconds; a passing wait returns at once anyway.
        _ = await budget.wait { lock.withLock { sent }.contains { $0.contains(part) } }
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
    let budget: MPNWaitBudget

    init(budget: MPNWaitBudget = MPNWaitBudget()) { self.budget = budget }

    func add(_ e: String) { lock.withLock { events.append(e) } }
    var all: [String] { lock.withLock { events } }

    /// Waits until `count` events containing `part` arrived (within the test's `budget`).
    func waitFor(_ part: String, count: Int = 1) async -> Bool {
        await budget.wait { all.filter { $0.contains(part) }.count >= count }
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
