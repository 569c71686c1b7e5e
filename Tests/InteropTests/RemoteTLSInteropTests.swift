import Foundation
import LightstreamerServer
import MPNTestSupport
import Testing

/// The remote adapters' ports with TLS: the official Python Remote Adapter SDK connects with
/// its `ssl_context` (a context trusting only a throw-away CA, checking the name `localhost`),
/// both the Metadata and the Data Adapter, and the official Python client gets MERGE updates
/// with snapshot and DISTINCT updates with nulls through them.
extension RemoteAdaptersInteropTests {
    @Test(
        .enabled(
            if: InteropTests.pythonAvailable || inCI,
            "python3 with venv and pip is not available: interop with the Remote Adapter SDK skipped"),
        .timeLimit(.minutes(3)))
    func pythonRemoteAdaptersOverTLS() async throws {
        let venvPython = try await Self.venvPython()
        let dir = try Self.temporaryDirectory("ls-remote-tls")
        defer { try? FileManager.default.removeItem(at: dir) }
        let ca = try TestCertificateAuthority(name: "Remote adapters interop CA")
        let leaf = try ca.issueServerCertificate(host: "localhost")
        let caFile = dir.appendingPathComponent("ca.pem").path
        let certFile = dir.appendingPathComponent("cert.pem").path
        let keyFile = dir.appendingPathComponent("key.pem").path
        try ca.pem.write(toFile: caFile, atomically: true, encoding: .utf8)
        try leaf.pem.write(toFile: certFile, atomically: true, encoding: .utf8)
        try leaf.keyPEM.write(toFile: keyFile, atomically: true, encoding: .utf8)

        let tls = ServerConfiguration.TLS(certificateChainPath: certFile, privateKeyPath: keyFile)
        var metadata = MetadataConfiguration()
        metadata.remote = RemoteAdapterConfiguration(
            port: 0, credentials: RemoteCredentials(user: "remote1", password: "change-me"),
            tls: tls)
        let data = RemoteAdapterConfiguration(
            port: 0, credentials: RemoteCredentials(user: "remote1", password: "change-me"),
            tls: tls)
        var config = AdapterSetConfiguration(
            name: "REMOTE", metadata: metadata,
            dataAdapters: [DataAdapterConfiguration(name: "DEFAULT", items: [:], remote: data)])
        config.remoteWaitMillis = 30_000
        let set = config.makeAdapterSet()
        let server = LightstreamerServer(options: ServerOptions(host: "127.0.0.1", port: 0), adapterSets: [set])
        let starting = Task { try await server.start() }
        let ports = try await Self.remotePorts(of: set)
        let remotes = try Self.spawnRemotes(
            venvPython, ports: ports, runFor: 150,
            extra: ["--host", "localhost", "--tls-ca", caFile])
        defer { for p in remotes where p.isRunning { p.terminate() } }
        try await starting.value
        defer { Task { await server.shutdown() } }
        #expect(set.remoteEndpoints.allSatisfy { $0.isConnected }, "the remotes did not connect over TLS")
        let port = try #require(server.port)

        let driver = InteropTests.interopDir.appendingPathComponent("interop_driver.py").path
        let scenarios = ["merge_snapshot", "distinct_nulls"]
        let r = try await InteropTests.runOffPool(
            venvPython,
            [
                driver, "--port", String(port), "--transport", "WS-STREAMING", "--adapter-set", "REMOTE", "--scenarios",
            ] + scenarios,
            timeout: 100)
        var passed: [String: Bool] = [:]
        for line in r.stdout.split(separator: "\n") {
            guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let name = obj["scenario"] as? String, let ok = obj["ok"] as? Bool
            else { continue }
            passed[name] = ok
        }
        #expect(r.status == 0, "driver exited \(r.status)\n\(r.stdout)\n\(r.stderr.suffix(3000))")
        for name in scenarios { #expect(passed[name] == true, "over TLS: \(name) did not pass\n\(r.stdout)") }
        print("Remote adapters over TLS (lightstreamer-adapter ssl_context) with lightstreamer-client-lib:\n\(r.stdout)")
    }
}
