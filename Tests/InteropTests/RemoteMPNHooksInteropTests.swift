import Foundation
import LightstreamerClient
import LightstreamerServer
import MPNModule
import Testing

/// MPN subscription activation (`MSA`) and device token change (`MDC`) checked by the official
/// Python Remote Adapter SDK's Metadata Adapter (`Tests/Interop/remote_adapters.py`: a group
/// starting with `denied` is refused with code -11, a token change of an application id ending
/// in `.locked` with -12). Our Swift `LightstreamerClient` makes the MPN requests (the official
/// Python client has no MPN API).
extension RemoteAdaptersInteropTests {
    final class MPNSubscriptionRecorder: MPNSubscriptionDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var _events: [String] = []
        var events: [String] { lock.withLock { _events } }
        func mpnSubscriptionDidAddDelegate(_ subscription: MPNSubscription) {}
        func mpnSubscriptionDidRemoveDelegate(_ subscription: MPNSubscription) {}
        func mpnSubscriptionDidSubscribe(_ subscription: MPNSubscription) { lock.withLock { _events.append("subscribed") } }
        func mpnSubscriptionDidUnsubscribe(_ subscription: MPNSubscription) {}
        func mpnSubscription(_ subscription: MPNSubscription, didFailSubscriptionWithErrorCode code: Int, message: String?) {
            lock.withLock { _events.append("failed \(code) \(message ?? "")") }
        }
        func mpnSubscription(_ subscription: MPNSubscription, didFailUnsubscriptionWithErrorCode code: Int, message: String?) {}
        func mpnSubscriptionDidTrigger(_ subscription: MPNSubscription) {}
        func mpnSubscription(_ subscription: MPNSubscription, didChangeStatus status: MPNSubscription.Status, timestamp: Int64) {}
        func mpnSubscription(_ subscription: MPNSubscription, didChangeProperty property: String) {}
        func mpnSubscription(
            _ subscription: MPNSubscription, didFailModificationWithErrorCode code: Int, message: String?,
            property: String
        ) {}
    }

    @Test(
        .enabled(
            if: InteropTests.pythonAvailable || inCI,
            "python3 with venv and pip is not available: interop with the Remote Adapter SDK skipped"),
        .timeLimit(.minutes(2)))
    func pythonRemoteMetadataVetoesMPNActivationAndTokenChange() async throws {
        let venvPython = try await Self.venvPython()
        let dir = try Self.temporaryDirectory("ls-remote-mpn-hooks")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, remotes) = try await Self.startMPNServer(configJSON: Self.configJSON, dir: dir, venvPython: venvPython)
        defer { for p in remotes where p.isRunning { p.terminate() } }
        defer { Task { await server.shutdown() } }
        let port = try #require(server.port)
        func token() -> String { (0..<32).map { _ in String(format: "%02x", Int.random(in: 0..<256)) }.joined() }
        func client() -> LightstreamerClient {
            let c = LightstreamerClient(serverAddress: "http://127.0.0.1:\(port)", adapterSet: "REMOTE")
            c.connectionOptions.forcedTransport = .WS_STREAMING
            return c
        }
        func waitFor(_ events: () -> [String]) async throws {
            for _ in 0..<500 where events().isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        }

        // MSA: an activation the remote accepts, one it refuses with -11.
        let c1 = client()
        let device = MPNDevice(deviceToken: token(), applicationId: "com.example.push", platform: "Apple", tokenStore: nil)
        let deviceEvents = DeviceRecorder()
        device.addDelegate(deviceEvents)
        c1.register(forMPN: device)
        c1.connect()
        try await waitFor { deviceEvents.events }
        #expect(deviceEvents.events == ["registered"])
        var activations: [String: [String]] = [:]
        for group in ["item1", "denied1"] {
            let sub = MPNSubscription(subscriptionMode: .MERGE, item: group, fields: ["stock_name", "last_price"])
            sub.notificationFormat = MPNBuilder().body("${stock_name} at ${last_price}").build()
            let rec = MPNSubscriptionRecorder()
            sub.addDelegate(rec)
            c1.subscribeMPN(sub, coalescing: false)
            try await waitFor { rec.events }
            activations[group] = rec.events
        }
        c1.disconnect()
        #expect(activations["item1"] == ["subscribed"], "accepted activation: \(activations)")
        let refusedActivation = activations["denied1"] ?? []
        #expect(
            refusedActivation.count == 1 && refusedActivation.first?.hasPrefix("failed -11") == true,
            "refused activation: \(activations)")

        // MDC: a device registered with one token, then again with another (the client sends the
        // change, as the previous token is in its token store): the remote refuses with -12.
        let store = MPNTokenStore(directory: dir.appendingPathComponent("tokens", isDirectory: true))
        var registrations: [[String]] = []
        for t in [token(), token()] {
            let c = client()
            let d = MPNDevice(deviceToken: t, applicationId: "com.example.locked", platform: "Apple", tokenStore: store)
            let rec = DeviceRecorder()
            d.addDelegate(rec)
            c.register(forMPN: d)
            c.connect()
            try await waitFor { rec.events }
            registrations.append(rec.events)
            c.disconnect()
        }
        #expect(registrations.first == ["registered"], "first registration: \(registrations)")
        let refusedChange = registrations.last ?? []
        #expect(refusedChange.count == 1 && refusedChange.first?.hasPrefix("failed -12") == true, "token change: \(registrations)")
        print("MPN activation and token change against the remote Metadata Adapter: \(activations), \(registrations)")
    }
}
