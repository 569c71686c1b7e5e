import Crypto
import Foundation
import LightstreamerServer
import MPNTestSupport
import Testing
import X509

@testable import LightstreamerClient

#if canImport(Security)
import Security
#endif

/// https and wss against the in-process server with a test CA's certificate for `localhost`:
/// the client trusts the CA through the internal hook; `certificatePins` with the server's
/// key connects, with another key ends in error 62 (DISCONNECTED, no retry).
@Suite struct TLSEndToEndTests {
    struct TestPKI {
        let caPEM: String
        let leafPEM: String
        let otherPEM: String
        let directory: URL
        let chainFile: String
        let keyFile: String

        static func make() throws -> TestPKI {
            let authority = try TestCertificateAuthority(name: "Lightstreamer test CA")
            let other = try TestCertificateAuthority(name: "Some other key")
            let leaf = try authority.issueServerCertificate(host: "localhost")
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tls-e2e-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let leafPEM = leaf.pem
            let caPEM = authority.pem
            let chain = dir.appendingPathComponent("chain.pem").path
            let keyFile = dir.appendingPathComponent("key.pem").path
            try (leafPEM + "\n" + caPEM + "\n").write(toFile: chain, atomically: true, encoding: .utf8)
            try leaf.keyPEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
            return TestPKI(
                caPEM: caPEM, leafPEM: leafPEM, otherPEM: other.pem, directory: dir,
                chainFile: chain, keyFile: keyFile)
        }
    }

    static func start(_ pki: TestPKI) async throws -> (LightstreamerServer, Int) {
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.tlsCertificateChainFile = pki.chainFile
        options.tlsPrivateKeyFile = pki.keyFile
        let server = LightstreamerServer(options: options, adapterSets: [TestServer.demoSet()])
        try await server.start()
        guard let port = server.port else { throw TestError("no port") }
        return (server, port)
    }

    final class PropertyRecorder: ClientDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var _properties: [String] = []
        var properties: [String] { lock.withLock { _properties } }
        func clientDidRemoveDelegate(_ client: LightstreamerClient) {}
        func clientDidAddDelegate(_ client: LightstreamerClient) {}
        func client(_ client: LightstreamerClient, didReceiveServerError errorCode: Int, withMessage errorMessage: String) {}
        func client(_ client: LightstreamerClient, didChangeStatus status: LightstreamerClient.Status) {}
        func client(_ client: LightstreamerClient, didChangeProperty property: String) { lock.withLock { _properties.append(property) } }
    }

    func client(port: Int, _ pki: TestPKI, transport: TransportSelection, pin: String?) throws -> (LightstreamerClient, ClientRecorder) {
        let client = LightstreamerClient(serverAddress: "https://localhost:\(port)", adapterSet: "DEMO")
        client.connectionOptions.forcedTransport = transport
        // The transport timeout is retryDelay: leave room for TLS handshakes on a busy machine.
        client.connectionOptions.retryDelay = 2000
        client.connectionDetails.additionalTrustRootsPEM = [pki.caPEM]
        if let pin { client.connectionDetails.certificatePins = [try pinKey(pin)] }
        let events = ClientRecorder()
        client.addDelegate(events)
        return (client, events)
    }

    /// The public key of a PEM certificate as a `SecKey`.
    func pinKey(_ pem: String) throws -> SecKey {
        #if canImport(Security)
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let der = Data(base64Encoded: base64),
            let certificate = SecCertificateCreateWithData(nil, der as CFData),
            let key = SecCertificateCopyKey(certificate)
        else { throw TestError("no key in \(pem)") }
        return key
        #else
        return try SecKey(certificatePEM: pem)
        #endif
    }

    @Test(arguments: [TransportSelection.WS_STREAMING, .HTTP_STREAMING])
    func matchingPinConnectsAndStreams(transport: TransportSelection) async throws {
        let pki = try TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory) }
        let (server, port) = try await Self.start(pki)
        defer { Task { await server.shutdown() } }
        let (client, events) = try client(port: port, pki, transport: transport, pin: pki.leafPEM)
        let sub = Subscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
        let updates = UpdateRecorder()
        sub.addDelegate(updates)
        client.subscribe(sub)
        client.connect()
        try await waitUntil(seconds: 30) { updates.counts.count >= 2 || !events.serverErrors.isEmpty }
        #expect(events.serverErrors.isEmpty)
        #expect(events.statuses.contains(transport == .WS_STREAMING ? "CONNECTED:WS-STREAMING" : "CONNECTED:HTTP-STREAMING"))
        client.disconnect()
    }

    @Test(arguments: [TransportSelection.WS_STREAMING, .HTTP_STREAMING])
    func wrongPinIsError62WithoutRetry(transport: TransportSelection) async throws {
        let pki = try TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory) }
        let (server, port) = try await Self.start(pki)
        defer { Task { await server.shutdown() } }
        let (client, events) = try client(port: port, pki, transport: transport, pin: pki.otherPEM)
        client.connect()
        try await waitUntil(seconds: 30) { !events.serverErrors.isEmpty }
        #expect(events.serverErrors == [62])
        #expect(client.status == .DISCONNECTED)
        let statuses = events.statuses
        #expect(statuses.last == "DISCONNECTED")
        // No retry: still DISCONNECTED well past retryDelay, no session ever made.
        try await Task.sleep(for: .milliseconds(2500))
        #expect(client.status == .DISCONNECTED)
        #expect(events.statuses == statuses)
        #expect(!events.statuses.contains { $0.hasPrefix("CONNECTED") })
        #expect(events.serverErrors == [62])
        #expect(server.sessionCount == 0)
    }

    @Test func withoutPinsStandardValidationStillApplies() async throws {
        let pki = try TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory) }
        let (server, port) = try await Self.start(pki)
        defer { Task { await server.shutdown() } }
        // Trusted CA, no pins: connects.
        let (trusted, events) = try client(port: port, pki, transport: .WS_STREAMING, pin: nil)
        trusted.connect()
        try await waitUntil(seconds: 30) { events.statuses.contains("CONNECTED:WS-STREAMING") }
        trusted.disconnect()
        // Untrusted CA: never connects, even with the right pin.
        let untrusted = LightstreamerClient(serverAddress: "https://localhost:\(port)", adapterSet: "DEMO")
        untrusted.connectionOptions.forcedTransport = .WS_STREAMING
        untrusted.connectionOptions.retryDelay = 300
        untrusted.connectionDetails.certificatePins = [try pinKey(pki.leafPEM)]
        let ev2 = ClientRecorder()
        untrusted.addDelegate(ev2)
        untrusted.connect()
        try await waitUntil(seconds: 30) { ev2.statuses.contains("DISCONNECTED:WILL-RETRY") }
        #expect(!ev2.statuses.contains { $0.hasPrefix("CONNECTED") })
        untrusted.disconnect()
    }

    @Test func settingPinsFiresThePropertyEventOnChangeOnly() async throws {
        let pki = try TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory) }
        let client = LightstreamerClient(serverAddress: "https://localhost:1", adapterSet: "DEMO")
        let rec = PropertyRecorder()
        client.addDelegate(rec)
        #expect(client.connectionDetails.certificatePins.isEmpty)
        let key = try pinKey(pki.leafPEM)
        client.connectionDetails.certificatePins = [key]
        client.connectionDetails.certificatePins = [try pinKey(pki.leafPEM)] // same key
        client.connectionDetails.certificatePins = []
        try await waitUntil(seconds: 30) { rec.properties.filter { $0 == "certificatePins" }.count >= 2 }
        try await Task.sleep(for: .milliseconds(100))
        #expect(rec.properties.filter { $0 == "certificatePins" }.count == 2)
        #if !canImport(Security)
        #expect(key.subjectPublicKeyInfo.count > 60)
        #expect(throws: CertificatePinError.self) { try SecKey(subjectPublicKeyInfoDER: [0x30, 0x00]) }
        #endif
    }
}
