import Foundation
import LightstreamerClient
import LightstreamerServer
import MPNModule
import Testing

/// MPN device access checked by the remote Metadata Adapter (`MDA`). The official Python client
/// has no MPN API (lightstreamer-client-lib 2.2.3, as pinned, has none), so our own Swift
/// `LightstreamerClient` registers the devices; the Metadata Adapter is still the official
/// Python Remote Adapter SDK in its own process.
extension RemoteAdaptersInteropTests {
    final class DeviceRecorder: MPNDeviceDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var _events: [String] = []
        var events: [String] { lock.withLock { _events } }
        func mpnDeviceDidAddDelegate(_ device: MPNDevice) {}
        func mpnDeviceDidRemoveDelegate(_ device: MPNDevice) {}
        func mpnDeviceDidRegister(_ device: MPNDevice) { lock.withLock { _events.append("registered") } }
        func mpnDeviceDidSuspend(_ device: MPNDevice) {}
        func mpnDeviceDidResume(_ device: MPNDevice) {}
        func mpnDevice(_ device: MPNDevice, didFailRegistrationWithErrorCode code: Int, message: String?) {
            lock.withLock { _events.append("failed \(code) \(message ?? "")") }
        }
        func mpnDevice(_ device: MPNDevice, didChangeStatus status: MPNDevice.Status, timestamp: Int64) {}
        func mpnDeviceDidUpdateSubscriptions(_ device: MPNDevice) {}
        func mpnDeviceDidResetBadge(_ device: MPNDevice) {}
        func mpnDevice(_ device: MPNDevice, didFailBadgeResetWithErrorCode code: Int, message: String?) {}
    }

    @Test(
        .enabled(
            if: InteropTests.pythonAvailable || inCI,
            "python3 with venv and pip is not available: interop with the Remote Adapter SDK skipped"),
        .timeLimit(.minutes(2)))
    func pythonRemoteMetadataVetoesAnMPNDevice() async throws {
        let venvPython = try await Self.venvPython()
        let dir = try Self.temporaryDirectory("ls-remote-mpn")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (server, remotes) = try await Self.startMPNServer(configJSON: Self.configJSON, dir: dir, venvPython: venvPython)
        defer { for p in remotes where p.isRunning { p.terminate() } }
        defer { Task { await server.shutdown() } }
        let port = try #require(server.port)

        // One device the remote accepts (the MDA path works), one it refuses with code -9.
        var outcomes: [String: [String]] = [:]
        for appId in ["com.example.push", "com.example.denied"] {
            let client = LightstreamerClient(serverAddress: "http://127.0.0.1:\(port)", adapterSet: "REMOTE")
            client.connectionOptions.forcedTransport = .WS_STREAMING
            let token = (0..<32).map { _ in String(format: "%02x", Int.random(in: 0..<256)) }.joined()
            let device = MPNDevice(deviceToken: token, applicationId: appId, platform: "Apple", tokenStore: nil)
            let rec = DeviceRecorder()
            device.addDelegate(rec)
            client.register(forMPN: device)
            client.connect()
            for _ in 0..<500 where rec.events.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
            outcomes[appId] = rec.events
            client.disconnect()
        }
        #expect(outcomes["com.example.push"] == ["registered"], "accepted device: \(outcomes)")
        let refused = outcomes["com.example.denied"] ?? []
        #expect(refused.count == 1 && refused.first?.hasPrefix("failed -9") == true, "refused device: \(outcomes)")
        print("MPN devices against the remote Metadata Adapter (Swift client): \(outcomes)")
    }
}
