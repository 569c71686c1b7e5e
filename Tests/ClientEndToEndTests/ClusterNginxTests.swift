import Foundation
import NIOPosix
import Testing

@testable import LightstreamerClient

/// docs/CLUSTER.md's deployment, run: nginx on loopback in front of three `lightstreamer-server`
/// nodes, each announcing `<nginx>/<node>` as its control link. Clients on all four transports
/// connect to nginx only: creates spread over the nodes, and each client's binds, controls and
/// messages reach the node that holds its session (a message is processed only there).
/// Skipped when nginx is not installed (scripts/test.sh installs it; CI fails without it).
@Suite(
    .serialized, .timeLimit(.minutes(3)), .enabled(if: ClusterProcesses.nginx != nil || ProcessInfo.processInfo.environment["CI"] != nil))
struct ClusterNginxTests {
    static let nodeNames = ["node-1", "node-2", "node-3"]

    @Test func createsSpreadAndControlsReachTheirNode() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var children: [ChildProcess] = []
        var clients: [LightstreamerClient] = []
        do {
            let balancerPort = try await ClusterProcesses.freePort(group: group)
            var nodes: [ClusterNginxConfig.Node] = []
            for name in Self.nodeNames {
                let (child, port) = try await ClusterProcesses.startNode(
                    name: name, controlLink: "127.0.0.1:\(balancerPort)/\(name)",
                    directory: dir)
                children.append(child)
                nodes.append(.init(name: name, port: port))
            }
            let config = ClusterNginxConfig.forTest(listenPort: balancerPort, nodes: nodes, directory: dir.path)
            children.append(try await ClusterProcesses.startNginx(config: config, port: balancerPort, directory: dir, group: group))

            // Three clients per transport, one after the other: round robin puts one of each on every node.
            let transports: [TransportSelection] = [.WS_STREAMING, .HTTP_STREAMING, .WS_POLLING, .HTTP_POLLING]
            var probes: [(client: LightstreamerClient, transport: TransportSelection, updates: UpdateRecorder, events: ClientRecorder)] = []
            for transport in transports {
                for _ in 0..<3 {
                    let client = LightstreamerClient(serverAddress: "http://127.0.0.1:\(balancerPort)", adapterSet: "DEMO")
                    client.connectionOptions.forcedTransport = transport
                    client.connectionOptions.retryDelay = 1000
                    client.connectionOptions.idleTimeout = 1000
                    let events = ClientRecorder()
                    client.addDelegate(events)
                    let sub = Subscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
                    let updates = UpdateRecorder()
                    sub.addDelegate(updates)
                    client.subscribe(sub)
                    _ = try await client.connectAndWait()
                    clients.append(client)
                    probes.append((client, transport, updates, events))
                }
            }
            for p in probes {
                let updates = p.updates
                try await waitUntil(seconds: 30) { updates.counts.count >= 2 }
                let outcome = MessageRecorder()
                p.client.sendMessage("CHAT|hello", withSequence: "chat", delegate: outcome)
                try await waitUntil(seconds: 15) { outcome.outcomes.count == 1 }
                #expect(outcome.outcomes == ["processed"], "\(p.transport): \(outcome.outcomes)")
                #expect(p.events.serverErrors.isEmpty, "\(p.transport): \(p.events.serverErrors)")
            }
            // Every node got one client of each transport, and said so in SERVNAME and the control link.
            for transport in transports {
                let names = probes.filter { $0.transport == transport }.compactMap { $0.client.connectionDetails.serverSocketName }
                #expect(names.sorted() == Self.nodeNames.map { "Lightstreamer Swift Server (\($0))" }, "\(transport): \(names)")
            }
            for p in probes {
                let name = try #require(p.client.connectionDetails.serverSocketName?.split(separator: "(").last?.dropLast())
                #expect(p.client.connectionDetails.serverInstanceAddress == "http://127.0.0.1:\(balancerPort)/\(name)")
            }
            // HTTP binds, controls and messages went through the node paths, never through the pool.
            let access = (try? String(contentsOf: dir.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
            for line in access.split(separator: "\n") where line.contains("\"POST /lightstreamer/") {
                #expect(line.contains("/lightstreamer/create_session.txt"), "a non-create request through the pool: \(line)")
            }
            for name in Self.nodeNames {
                #expect(
                    access.contains("POST /\(name)/lightstreamer/bind_session.txt"), "no bind through /\(name)/: \(access.suffix(2_000))")
                #expect(access.contains("POST /\(name)/lightstreamer/msg.txt"), "no message through /\(name)/")
            }
            for client in clients { client.disconnect() }
        } catch {
            for c in children { await c.stop() }
            try? await group.shutdownGracefully()
            throw error
        }
        for c in children { await c.stop() }
        try? await group.shutdownGracefully()
        try? FileManager.default.removeItem(at: dir)
    }
}
