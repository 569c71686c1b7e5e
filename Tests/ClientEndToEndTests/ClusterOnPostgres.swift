import Foundation
import NIOPosix

/// The cluster of the failover tests: `lightstreamer-server` nodes with the DEMO adapters and the
/// MPN Module on one PostgreSQL schema (a fresh one), behind nginx on loopback, in a temporary
/// directory that holds every file (configurations, logs, notifications).
final class ClusterOnPostgres {
    static let moduleCheckMillis = 500
    /// A node silent for 3 s is dead (default 30 s).
    static let moduleTimeoutMillis = 3_000

    let dir: URL
    let group: MultiThreadedEventLoopGroup
    let balancerPort: Int
    private(set) var nodes: [ClusterNginxConfig.Node] = []
    private(set) var children: [String: ChildProcess] = [:]
    private var nginx: ChildProcess?

    private init(dir: URL, group: MultiThreadedEventLoopGroup, balancerPort: Int) {
        self.dir = dir
        self.group = group
        self.balancerPort = balancerPort
    }

    /// Starts the nodes (each with its control link `<nginx>/<name>`), then nginx.
    static func start(names: [String], postgresURL: String, failTimeout: Int, label: String) async throws -> ClusterOnPostgres {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        let cluster: ClusterOnPostgres
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            cluster = ClusterOnPostgres(dir: dir, group: group, balancerPort: try await ClusterProcesses.freePort(group: group))
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        do {
            let schema = "cluster_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            for name in names {
                try nodeConfig(url: postgresURL, schema: String(schema), notifications: cluster.notifications(name))
                    .write(to: cluster.configFile(name))
                let port = try await cluster.startNode(name, port: 0)
                cluster.nodes.append(.init(name: name, port: port))
            }
            let config = ClusterNginxConfig.forTest(
                listenPort: cluster.balancerPort, nodes: cluster.nodes, directory: dir.path,
                failTimeout: failTimeout)
            cluster.nginx = try await ClusterProcesses.startNginx(
                config: config, port: cluster.balancerPort, directory: dir,
                group: group)
        } catch {
            await cluster.stop(keepFiles: true)
            throw error
        }
        return cluster
    }

    /// One node's configuration: the DEMO adapters, MPN on the shared schema, notifications of
    /// the `test` level written to `<node>.jsonl`.
    static func nodeConfig(url: String, schema: String, notifications: String) throws -> Data {
        let json: [String: Any] = [
            "demo": true,
            "mpn": [
                "enabled": true,
                "store": ["postgresURL": url, "postgresSchema": schema],
                "apple": [["id": "*", "serviceLevel": "test", "logFile": notifications]],
                "moduleCheckPeriodMillis": moduleCheckMillis,
                "moduleTimeoutMillis": moduleTimeoutMillis,
            ] as [String: Any],
        ]
        return try JSONSerialization.data(withJSONObject: json)
    }

    var balancerURL: String { "http://127.0.0.1:\(balancerPort)" }
    func notifications(_ node: String) -> String { dir.appendingPathComponent("\(node).jsonl").path }
    func configFile(_ node: String) -> URL { dir.appendingPathComponent("\(node).json") }
    /// What the node wrote (all its runs).
    func log(_ node: String) -> String { children[node]?.text ?? "" }

    private func startNode(_ name: String, port: Int) async throws -> Int {
        let (child, actual) = try await ClusterProcesses.startNode(
            name: name, controlLink: "127.0.0.1:\(balancerPort)/\(name)",
            directory: dir, port: port,
            options: ["--config", configFile(name).path])
        children[name] = child
        return actual
    }

    /// SIGKILL.
    func kill(_ node: String) async {
        await children[node]?.killNow()
    }

    /// Starts a node again on its port.
    func restart(_ node: String) async throws {
        guard let port = nodes.first(where: { $0.name == node })?.port else { throw TestError("no node \(node)") }
        _ = try await startNode(node, port: port)
    }

    /// Stops everything; the directory is removed unless `keepFiles` (to look at after a failure).
    func stop(keepFiles: Bool) async {
        await nginx?.stop()
        for c in children.values { await c.stop() }
        try? await group.shutdownGracefully()
        if !keepFiles { try? FileManager.default.removeItem(at: dir) }
    }
}
