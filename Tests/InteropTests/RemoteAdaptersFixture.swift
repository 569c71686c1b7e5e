import Foundation
import LightstreamerServer
import MPNModule
import Testing

/// What the remote-adapter interop tests share: the venv with the official SDKs, the wait for
/// the server's remote ports, and the two `remote_adapters.py` processes.
extension RemoteAdaptersInteropTests {
    /// The venv's python, prepared off the cooperative pool (pip may take a while).
    static func venvPython() async throws -> String {
        let python = try #require(InteropTests.python, "CI=true and no python3 with venv and pip")
        return try await withCheckedThrowingContinuation { c in
            Thread { c.resume(with: Result { try InteropTests.prepareVenv(python: python) }) }.start()
        }
    }

    /// The remote ports of `set` by role (`metadata`, `data:DEFAULT`), once both are bound: the
    /// server's start waits for the remotes, which need the ports first.
    static func remotePorts(of set: AdapterSet) async throws -> [String: Int] {
        var ports: [String: Int] = [:]
        for _ in 0..<500 {
            ports = Dictionary(uniqueKeysWithValues: set.remoteEndpoints.compactMap { e in e.boundPort.map { (e.role, $0) } })
            if ports.count == 2 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        return ports
    }

    /// Starts the SDK's Metadata and Data Adapters (`remote_adapters.py`, credentials
    /// remote1/change-me) on `ports`, with `extra` arguments; the caller terminates them.
    static func spawnRemotes(
        _ venvPython: String, ports: [String: Int], runFor seconds: Int,
        extra: [String] = []
    ) throws -> [Process] {
        let script = InteropTests.interopDir.appendingPathComponent("remote_adapters.py").path
        var remotes: [Process] = []
        for (role, key) in [("metadata", "metadata"), ("data", "data:DEFAULT")] {
            let port = try #require(ports[key], "the server did not bind its \(key) remote port")
            remotes.append(
                try spawn(
                    venvPython,
                    [script, "--role", role, "--port", String(port)] + extra
                        + ["--user", "remote1", "--password", "change-me", "--run-for", String(seconds)]))
        }
        return remotes
    }

    /// A fresh temporary directory named after `label`.
    static func temporaryDirectory(_ label: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// An MPN-enabled server (SQLite store and a log provider under `dir`) with the adapter set of
    /// `configJSON`, started once the SDK's two adapters (spawned here, run for 60 s) connected.
    static func startMPNServer(
        configJSON: String, dir: URL, venvPython: String
    ) async throws
        -> (server: LightstreamerMPNServer, remotes: [Process])
    {
        let config = try JSONDecoder().decode(AdapterSetConfiguration.self, from: Data(configJSON.utf8))
        let set = config.makeAdapterSet()
        var mpn = MPNConfiguration.demoDefault(sqlitePath: dir.appendingPathComponent("mpn.sqlite").path)
        var app = MPNConfiguration.Application(id: "*")
        app.logFile = dir.appendingPathComponent("notifications.jsonl").path
        mpn.apple = [app]
        let server = try await LightstreamerMPNServer.make(
            options: ServerOptions(host: "127.0.0.1", port: 0),
            adapterSets: [set], mpn: mpn)
        let starting = Task { try await server.start() }
        let remotes = try spawnRemotes(venvPython, ports: try await remotePorts(of: set), runFor: 60)
        do {
            try await starting.value
        } catch {
            for p in remotes where p.isRunning { p.terminate() }
            throw error
        }
        return (server, remotes)
    }
}
