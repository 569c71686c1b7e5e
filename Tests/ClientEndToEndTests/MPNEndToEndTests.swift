import Foundation
import LightstreamerServer
import Testing

@testable import LightstreamerClient

/// The MPN API against our server's MPN Module (SQLite store, log provider): register,
/// subscribe with a trigger on the demo `counter` item, see it trigger (and exactly one
/// notification written by the provider), reconnect with a new session and find the
/// subscription again.
@Suite(.serialized)
struct MPNEndToEndTests {
    final class Recorder: MPNDeviceDelegate, MPNSubscriptionDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var _events: [String] = []
        var events: [String] { lock.withLock { _events } }
        func add(_ e: String) { lock.withLock { _events.append(e) } }

        func mpnDeviceDidAddDelegate(_ device: MPNDevice) {}
        func mpnDeviceDidRemoveDelegate(_ device: MPNDevice) {}
        func mpnDeviceDidRegister(_ device: MPNDevice) { add("registered") }
        func mpnDeviceDidSuspend(_ device: MPNDevice) {}
        func mpnDeviceDidResume(_ device: MPNDevice) {}
        func mpnDevice(_ device: MPNDevice, didFailRegistrationWithErrorCode code: Int, message: String?) {
            add("registrationFailed \(code)")
        }
        func mpnDevice(_ device: MPNDevice, didChangeStatus status: MPNDevice.Status, timestamp: Int64) {}
        func mpnDeviceDidUpdateSubscriptions(_ device: MPNDevice) { add("updated") }
        func mpnDeviceDidResetBadge(_ device: MPNDevice) {}
        func mpnDevice(_ device: MPNDevice, didFailBadgeResetWithErrorCode code: Int, message: String?) {}
        func mpnSubscriptionDidAddDelegate(_ subscription: MPNSubscription) {}
        func mpnSubscriptionDidRemoveDelegate(_ subscription: MPNSubscription) {}
        func mpnSubscriptionDidSubscribe(_ subscription: MPNSubscription) { add("subscribed") }
        func mpnSubscriptionDidUnsubscribe(_ subscription: MPNSubscription) { add("unsubscribed") }
        func mpnSubscription(_ subscription: MPNSubscription, didFailSubscriptionWithErrorCode code: Int, message: String?) {
            add("subscriptionFailed \(code)")
        }
        func mpnSubscription(_ subscription: MPNSubscription, didFailUnsubscriptionWithErrorCode code: Int, message: String?) {}
        func mpnSubscriptionDidTrigger(_ subscription: MPNSubscription) { add("triggered") }
        func mpnSubscription(_ subscription: MPNSubscription, didChangeStatus status: MPNSubscription.Status, timestamp: Int64) {}
        func mpnSubscription(_ subscription: MPNSubscription, didChangeProperty property: String) {}
        func mpnSubscription(
            _ subscription: MPNSubscription, didFailModificationWithErrorCode code: Int, message: String?, property: String
        ) {}
    }

    @Test func triggerThenFindAgainAfterReconnect() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mpn-client-e2e-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let logFile = dir.appendingPathComponent("notifications.jsonl").path
        let server = try await TestServer.startWithMPN(sqlitePath: dir.appendingPathComponent("mpn.sqlite").path, logFile: logFile)
        defer { Task { await server.stop() } }
        let store = MPNTokenStore(directory: FileManager.default.temporaryDirectory.appendingPathComponent("mpn-e2e-\(UUID())"))
        let token = (0..<32).map { _ in String(format: "%02x", Int.random(in: 0..<256)) }.joined()
        let device = MPNDevice(deviceToken: token, applicationId: "com.lightstreamer.demo", platform: "Apple", tokenStore: store)
        let rec = Recorder()
        device.addDelegate(rec)

        let (client, events) = server.client(transport: .WS_STREAMING)
        client.register(forMPN: device)
        client.connect()
        try await waitUntil { rec.events.contains("registered") || rec.events.contains { $0.hasPrefix("registrationFailed") } }
        try #require(rec.events.contains("registered"), "register refused: \(rec.events)")
        let deviceId = try #require(device.deviceId)

        let sub = MPNSubscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
        sub.notificationFormat = MPNBuilder().alert("count is ${count}").build()
        sub.triggerExpression = "Double.parseDouble(${count}) > 5"
        sub.addDelegate(rec)
        client.subscribeMPN(sub, coalescing: false)
        try await waitUntil(seconds: 15) { rec.events.contains("triggered") || rec.events.contains { $0.hasPrefix("subscriptionFailed") } }
        #expect(rec.events.contains("subscribed"))
        #expect(sub.isTriggered)
        let id = try #require(sub.subscriptionId)
        try await waitUntil { ((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "").contains(id) }
        let lines = try String(contentsOfFile: logFile, encoding: .utf8).split(separator: "\n").filter { $0.contains(id) }
        #expect(lines.count == 1, "exactly one notification: \(lines)")
        #expect(lines.first?.contains("count is ") == true)

        client.disconnect()
        try await waitUntil { events.statuses.last == "DISCONNECTED" }
        // The seed: isActive goes back to false on disconnection; the object stays, id kept.
        try await waitUntil { !sub.isActive }
        #expect(sub.status == .UNKNOWN)
        #expect(sub.subscriptionId == id)
        #expect(!rec.events.contains("unsubscribed"))
        let before = rec.events.filter { $0 == "registered" }.count
        client.connect()
        try await waitUntil { rec.events.filter { $0 == "registered" }.count > before }
        #expect(device.deviceId == deviceId)
        // The new registration's SUBS- snapshot gives the same object its status back.
        try await waitUntil { sub.isTriggered }
        #expect(client.findMPNSubscription(id) === sub)
        #expect(client.MPNSubscriptions.count == 1)

        // A second client, same device: the subscription comes from the server.
        let (other, _) = server.client(transport: .WS_STREAMING)
        let again = MPNDevice(deviceToken: token, applicationId: "com.lightstreamer.demo", platform: "Apple", tokenStore: store)
        let rec2 = Recorder()
        again.addDelegate(rec2)
        other.register(forMPN: again)
        other.connect()
        try await waitUntil { rec2.events.contains("updated") }
        let found = try #require(other.findMPNSubscription(id))
        #expect(found.isTriggered)
        #expect(found.triggerExpression != nil)
        #expect(client.findMPNSubscription(id) === sub)

        client.unsubscribeMultipleMPN(.ALL)
        try await waitUntil { rec.events.contains("unsubscribed") }
        client.disconnect()
        other.disconnect()
        try? FileManager.default.removeItem(at: store.directory)
    }
}
