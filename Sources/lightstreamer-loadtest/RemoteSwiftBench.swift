import Foundation
import LightstreamerServer

/// `--remote-swift`: the server's own ARI ingest limit, with a remote Data Adapter that is not
/// the bottleneck (`RemoteFeedGenerator`, this executable again as a child process). The server
/// runs in this process with adapter set REMOTE (rule-based Metadata Adapter, remote Data
/// Adapter `DEFAULT` on a free port, no credentials); one RAW table on items `load0…` on the
/// engine counts the updates that come in. With `sessions` > 0 a second child process (this
/// executable with `--connect-port`) opens that many WebSocket sessions on the same items, so
/// that this process's CPU is the server's alone (plus the counting table).
struct RemoteSwiftBench {
    let items: Int
    /// Total updates/s the generator sends; 0: as fast as it can.
    let rate: Double
    let sessions: Int
    let itemsPerSession: Int
    let warmup: Double
    let seconds: Double
    let serverThreads: Int

    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    func run() async throws {
        var config = AdapterSetConfiguration(
            name: "REMOTE",
            dataAdapters: [
                .init(name: "DEFAULT", items: [:], remote: RemoteAdapterConfiguration(port: 0, requestTimeoutMillis: 30_000))
            ])
        config.remoteWaitMillis = 30_000
        let set = config.makeAdapterSet()
        let engine = ItemEngine(adapterSets: [set])
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.threads = serverThreads
        options.sessions.maxSessionsPerAddress = nil
        options.front.maxConnectionsPerAddress = .max
        let server = LightstreamerServer(options: options, engine: engine)
        let starting = Task { try await server.start() }
        var dataPort: Int?
        for _ in 0..<1000 where dataPort == nil {
            dataPort = set.remoteEndpoints.first?.boundPort
            try await Task.sleep(for: .milliseconds(10))
        }
        guard let dataPort else { throw RemoteBenchError(description: "the remote data port did not open") }
        var children: [Process] = []
        // SIGKILL: a child started from a Swift concurrency thread may inherit a mask that blocks SIGTERM.
        defer { for p in children where p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        let generator = try Self.spawn(["--remote-feed-port", String(dataPort), "--remote-rate", String(rate)])
        children.append(generator)
        try await starting.value
        guard set.remoteEndpoints.first?.isConnected == true else {
            throw RemoteBenchError(description: "the generator did not connect")
        }
        guard let port = server.port else { throw RemoteBenchError(description: "no client port") }

        let sink = RemoteBench.CountingSink()
        let names = (0..<items).map { "load\($0)" }
        let handle = try await engine.subscribe(
            TableSpec(
                adapterSet: "REMOTE", dataAdapter: "DEFAULT", mode: .raw,
                items: names, fields: ["n", "ts"]), sink: sink)
        _ = handle
        if sessions > 0 {
            let perItem = rate > 0 ? rate / Double(items) : 0
            children.append(
                try Self.spawn(
                    [
                        "--connect-port", String(port), "--adapter-set", "REMOTE", "--sessions", String(sessions), "--items", String(items),
                        "--items-per-session", String(itemsPerSession), "--rate", String(perItem), "--warmup", String(warmup),
                        "--seconds", String(seconds),
                    ], output: true))
            for _ in 0..<1200 where server.sessionCount < sessions { try await Task.sleep(for: .milliseconds(100)) }
        }
        try await Task.sleep(for: .seconds(warmup))
        let generatorPid = generator.processIdentifier
        let start = (
            count: sink.count, at: Date(), cpu: processCPUSeconds(), remoteCPU: RemoteBench.cpuSeconds(pid: generatorPid),
            sent: server.metrics.snapshot.updatesSent
        )
        try await Task.sleep(for: .seconds(seconds))
        let end = (
            count: sink.count, at: Date(), cpu: processCPUSeconds(), remoteCPU: RemoteBench.cpuSeconds(pid: generatorPid),
            sent: server.metrics.snapshot.updatesSent
        )
        let elapsed = end.at.timeIntervalSince(start.at)
        let ingested = Double(end.count - start.count)
        let serverCPU = end.cpu - start.cpu
        print(
            String(
                format: "remote data adapter (Swift generator, %d items, %@): %.0f updates/s into the item engine over %.1f s; "
                    + "%d sessions: %.0f U lines/s written; CPU: server process %.0f%% (%.2f µs per ingested update), "
                    + "generator process %.0f%%",
                items, rate > 0 ? String(format: "%.0f/s asked", rate) : "unpaced", ingested / elapsed, elapsed, sessions,
                Double(end.sent - start.sent) / elapsed, 100 * serverCPU / elapsed,
                ingested > 0 ? serverCPU / ingested * 1e6 : 0, 100 * (end.remoteCPU - start.remoteCPU) / elapsed))
        if let clients = children.last, sessions > 0 {
            for _ in 0..<300 where clients.isRunning { try await Task.sleep(for: .milliseconds(100)) }
        }
        await server.shutdown()
    }

    /// This executable with `arguments`; its output is discarded unless `output`.
    static func spawn(_ arguments: [String], output: Bool = false) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        if !output { p.standardOutput = FileHandle.nullDevice }
        try p.run()
        return p
    }
}
