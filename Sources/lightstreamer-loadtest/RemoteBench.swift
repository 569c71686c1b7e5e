import Foundation
import LightstreamerServer

/// `--remote-python`: how many updates per second one remote Data Adapter process (the official
/// Python Remote Adapter SDK, `Tests/Interop/remote_adapters.py`, items `floodN` updated in a
/// tight loop) pushes over ARI into the item engine. The server runs in this process with the
/// REMOTE set (remote Metadata and Data Adapters, two SDK processes); one RAW table on the
/// items, subscribed on the engine directly (no client sessions), counts the updates.
struct RemoteBench {
    let python: String
    let script: String
    let items: Int
    let warmup: Double
    let seconds: Double

    /// `@unchecked Sendable`: its count is only touched under `lock`.
    final class CountingSink: TableSink, @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        var count: Int { lock.withLock { n } }
        func deliver(_ event: TableEvent) {
            if case .update = event { lock.withLock { n += 1 } }
        }
    }

    static let configJSON = #"""
        {"name": "REMOTE", "remoteWaitMillis": 30000,
         "metadata": {"remote": {"port": 0, "user": "remote1", "password": "change-me"}},
         "dataAdapters": [{"name": "DEFAULT", "remote": {"port": 0, "user": "remote1", "password": "change-me"}}]}
        """#

    func run() async throws {
        let config = try JSONDecoder().decode(AdapterSetConfiguration.self, from: Data(Self.configJSON.utf8))
        let set = config.makeAdapterSet()
        let engine = ItemEngine(adapterSets: [set])
        let server = LightstreamerServer(options: ServerOptions(host: "127.0.0.1", port: 0), engine: engine)
        let starting = Task { try await server.start() }
        var ports: [String: Int] = [:]
        for _ in 0..<1000 where ports.count < 2 {
            ports = Dictionary(uniqueKeysWithValues: set.remoteEndpoints.compactMap { e in e.boundPort.map { (e.role, $0) } })
            try await Task.sleep(for: .milliseconds(10))
        }
        var remotes: [Process] = []
        defer { for p in remotes where p.isRunning { p.terminate() } }
        for (role, key) in [("metadata", "metadata"), ("data", "data:DEFAULT")] {
            guard let port = ports[key] else { throw RemoteBenchError(description: "no \(key) port") }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: python)
            p.arguments = [
                script, "--role", role, "--port", String(port), "--user", "remote1", "--password", "change-me",
                "--run-for", String(Int(warmup + seconds + 30)),
            ]
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            remotes.append(p)
        }
        try await starting.value
        let sink = CountingSink()
        let names = (1...items).map { "flood\($0)" }
        let handle = try await engine.subscribe(
            TableSpec(
                adapterSet: "REMOTE", dataAdapter: "DEFAULT", mode: .raw,
                items: names, fields: ["n", "ts"]), sink: sink)
        _ = handle
        try await Task.sleep(for: .seconds(warmup))
        let dataPid = remotes[1].processIdentifier
        let start = (count: sink.count, at: Date(), cpu: processCPUSeconds(), remoteCPU: Self.cpuSeconds(pid: dataPid))
        try await Task.sleep(for: .seconds(seconds))
        let end = (count: sink.count, at: Date(), cpu: processCPUSeconds(), remoteCPU: Self.cpuSeconds(pid: dataPid))
        let elapsed = end.at.timeIntervalSince(start.at)
        let rate = Double(end.count - start.count) / elapsed
        print(
            String(
                format: "remote data adapter (Python SDK, %d flood items): %.0f updates/s into the item engine over %.1f s; "
                    + "CPU: server process %.0f%%, Python data process %.0f%%",
                items, rate, elapsed, 100 * (end.cpu - start.cpu) / elapsed,
                100 * (end.remoteCPU - start.remoteCPU) / elapsed))
        await server.shutdown()
    }

    /// utime + stime of a process from /proc (Linux), in seconds; 0 elsewhere.
    static func cpuSeconds(pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14, stime 15 (1-based in proc(5)).
        guard fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

struct RemoteBenchError: Error, CustomStringConvertible {
    let description: String
}
