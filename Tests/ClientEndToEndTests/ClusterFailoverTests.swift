import Foundation
import Testing

@testable import LightstreamerClient

/// docs/CLUSTER.md's deployment with the MPN Module on one PostgreSQL database, and one node
/// killed (`kill -9`): its clients get a new session on another node and receive again, the
/// clients of the other nodes notice nothing, an MPN device registered through the dead node is
/// taken over by a live one and its trigger fires once there, and the node, restarted, gets new
/// sessions again. Prints the failover times (docs/CLUSTER.md quotes them).
/// Needs nginx and `LS_TEST_POSTGRES_URL` (scripts/test.sh provides both; CI fails without them).
@Suite(
    .serialized, .timeLimit(.minutes(3)),
    .enabled(
        if: (ClusterProcesses.nginx != nil && ClusterProcesses.postgresURL != nil)
            || ProcessInfo.processInfo.environment["CI"] != nil,
        "nginx or LS_TEST_POSTGRES_URL missing (scripts/test.sh provides both)"))
struct ClusterFailoverTests {
    static let nodeNames = ["node-1", "node-2", "node-3"]
    /// nginx skips a node that refused a connection for this long.
    static let failTimeout = 3

    struct Probe {
        let client: LightstreamerClient
        let transport: TransportSelection
        let updates: UpdateRecorder
        let events: ClientRecorder
        var node: String { client.connectionDetails.serverSocketName ?? "" }
    }

    static func connectProbe(balancerPort: Int, transport: TransportSelection) async throws -> Probe {
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
        return Probe(client: client, transport: transport, updates: updates, events: events)
    }

    static func serverName(_ node: String) -> String { "Lightstreamer Swift Server (\(node))" }

    @Test func killedNodeClientsAndDevicesMoveAndTheNodeComesBack() async throws {
        let url = try #require(ClusterProcesses.postgresURL, "LS_TEST_POSTGRES_URL is not set (scripts/test.sh sets it)")
        let cluster = try await ClusterOnPostgres.start(
            names: Self.nodeNames, postgresURL: url, failTimeout: Self.failTimeout,
            label: "cluster-failover")
        let dir = cluster.dir
        let balancerPort = cluster.balancerPort
        var clients: [LightstreamerClient] = []
        do {
            // Twelve clients, three per transport: one of each on every node.
            var probes: [Probe] = []
            for transport in [TransportSelection.WS_STREAMING, .HTTP_STREAMING, .WS_POLLING, .HTTP_POLLING] {
                for _ in 0..<3 {
                    let p = try await Self.connectProbe(balancerPort: balancerPort, transport: transport)
                    clients.append(p.client)
                    probes.append(p)
                }
            }
            for p in probes {
                let updates = p.updates
                try await waitUntil(seconds: 30) { updates.counts.count >= 2 }
            }

            // An app registers a device through one node and activates a trigger there, then
            // goes away (in the background, as apps do): that node is the one to kill.
            let app = LightstreamerClient(serverAddress: "http://127.0.0.1:\(balancerPort)", adapterSet: "DEMO")
            app.connectionOptions.forcedTransport = .WS_STREAMING
            clients.append(app)
            let tokens = MPNTokenStore(directory: dir.appendingPathComponent("tokens"))
            let token = (0..<32).map { _ in String(format: "%02x", Int.random(in: 0..<256)) }.joined()
            let device = MPNDevice(deviceToken: token, applicationId: "com.example.cluster", platform: "Apple", tokenStore: tokens)
            let mpnEvents = MPNEndToEndTests.Recorder()
            device.addDelegate(mpnEvents)
            app.register(forMPN: device)
            _ = try await app.connectAndWait()
            try await waitUntil(seconds: 15) {
                mpnEvents.events.contains("registered") || mpnEvents.events.contains { $0.hasPrefix("registrationFailed") }
            }
            try #require(mpnEvents.events.contains("registered"), "register refused: \(mpnEvents.events)")
            let deviceId = try #require(device.deviceId)
            let victimServer = try #require(app.connectionDetails.serverSocketName)
            let victim = try #require(Self.nodeNames.first { Self.serverName($0) == victimServer })
            // The trigger: every node's counter (10 a second) passes it about 8 s from now, after the
            // kill (at once) and the takeover (3 s later), so only the node that took over can fire
            // it (at takeover, on the snapshot, if its counter passed it already).
            let highest = probes.compactMap { $0.updates.counts.last }.max() ?? 0
            let sub = MPNSubscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
            sub.notificationFormat = MPNBuilder().alert("count is ${count}").build()
            sub.triggerExpression = "Double.parseDouble(${count}) > \(highest + 80)"
            sub.addDelegate(mpnEvents)
            app.subscribeMPN(sub, coalescing: false)
            try await waitUntil(seconds: 15) {
                mpnEvents.events.contains("subscribed") || mpnEvents.events.contains { $0.hasPrefix("subscriptionFailed") }
            }
            try #require(mpnEvents.events.contains("subscribed"), "activation refused: \(mpnEvents.events)")
            let mpnId = try #require(sub.subscriptionId)
            app.disconnect()

            // kill -9.
            let affected = probes.filter { $0.node == victimServer }
            let others = probes.filter { $0.node != victimServer }
            #expect(affected.count == 4, "one client per transport on \(victim): \(probes.map(\.node))")
            let otherSessions = others.map { $0.client.connectionDetails.sessionId }
            let otherStatuses = others.map { $0.events.statuses.count }
            let otherCounts = others.map { $0.updates.counts.count }
            let killed = ContinuousClock.now
            await cluster.kill(victim)

            // Every affected client: a new session on a live node, and updates again there.
            var backAfter: [Int: Duration] = [:]
            var countOnNewSession: [Int: Int] = [:]
            let deadline = killed + .seconds(45)
            while backAfter.count < affected.count, ContinuousClock.now < deadline {
                for (i, p) in affected.enumerated() where backAfter[i] == nil {
                    let node = p.node
                    guard node != victimServer, !node.isEmpty else { continue }
                    let n = p.updates.counts.count
                    if let first = countOnNewSession[i] {
                        if n > first { backAfter[i] = ContinuousClock.now - killed }
                    } else {
                        countOnNewSession[i] = n
                    }
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            // Sooner than the clients' recovery timeout (15 s): a live node told them "session not
            // found" (nginx's backups), rather than nginx answering 502 until they gave up.
            #expect(backAfter.values.allSatisfy { $0 < .seconds(10) }, "slow: \(backAfter.values.map { Self.seconds($0) })")
            #expect(
                backAfter.count == affected.count,
                "clients not back: \(affected.enumerated().filter { backAfter[$0.offset] == nil }.map { "\($0.element.transport) on \($0.element.node)" })"
            )

            // The MPN device: taken over by a live node, its trigger fired once, there.
            var takenOverAfter: Duration?
            var takenOverBy: String?
            let mpnDeadline = killed + .seconds(60)
            while ContinuousClock.now < mpnDeadline {
                if takenOverAfter == nil,
                    let node = Self.nodeNames.first(where: {
                        $0 != victim && cluster.log($0).contains("taken over")
                            && cluster.log($0).contains(deviceId)
                    })
                {
                    takenOverAfter = ContinuousClock.now - killed
                    takenOverBy = node
                }
                let fired = Self.nodeNames.flatMap { Self.lines(cluster.notifications($0), containing: mpnId) }
                if !fired.isEmpty { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            let firedAfter = ContinuousClock.now - killed
            #expect(takenOverBy != nil, "no live node took the device over")
            try await Task.sleep(for: .seconds(2)) // a second notification would show by now
            let perNode = Self.nodeNames.map { ($0, Self.lines(cluster.notifications($0), containing: mpnId).count) }
            #expect(perNode.map(\.1).reduce(0, +) == 1, "exactly one notification in the cluster: \(perNode)")
            #expect(
                perNode.first { $0.0 == takenOverBy }?.1 == 1, "fired by the node that took over (\(takenOverBy ?? "none")): \(perNode)")

            // Nobody else noticed: same sessions, no status change, still receiving.
            for (i, p) in others.enumerated() {
                #expect(p.client.connectionDetails.sessionId == otherSessions[i], "\(p.transport) on \(p.node) changed session")
                #expect(p.events.statuses.count == otherStatuses[i], "\(p.transport) on \(p.node): \(p.events.statuses.suffix(3))")
                #expect(p.updates.counts.count > otherCounts[i] + 5, "\(p.transport) on \(p.node) stopped receiving")
            }

            // The node restarted (same port): once nginx tries it again, creates reach it.
            let restartedAt = ContinuousClock.now
            try await cluster.restart(victim)
            // Creates until one lands there (nginx tries it again fail_timeout after its last failure).
            var back: Probe?
            while back == nil, ContinuousClock.now < restartedAt + .seconds(Self.failTimeout + 20) {
                let p = try await Self.connectProbe(balancerPort: balancerPort, transport: .WS_STREAMING)
                clients.append(p.client)
                let updates = p.updates
                try await waitUntil(seconds: 15) { updates.counts.count >= 1 } // SERVNAME came before
                if p.node == victimServer { back = p } else { try await Task.sleep(for: .milliseconds(250)) }
            }
            let returned = try #require(back, "no new session on the restarted \(victim)")
            let updates = returned.updates
            try await waitUntil(seconds: 15) { updates.counts.count >= 2 }
            let rotationAfter = ContinuousClock.now - restartedAt

            let clientTimes = backAfter.values.sorted()
            print(
                "cluster failover: affected clients back after \(clientTimes.map { Self.seconds($0) }) (slowest "
                    + "\(clientTimes.last.map { Self.seconds($0) } ?? "-")); MPN device taken over by \(takenOverBy ?? "-") after "
                    + "\(takenOverAfter.map { Self.seconds($0) } ?? "-") (moduleTimeoutMillis \(ClusterOnPostgres.moduleTimeoutMillis), "
                    + "check every \(ClusterOnPostgres.moduleCheckMillis) ms); trigger fired \(Self.seconds(firedAfter)) after the kill; "
                    + "restarted node back in rotation after \(Self.seconds(rotationAfter)) (fail_timeout \(Self.failTimeout)s)")
            for c in clients { c.disconnect() }
        } catch {
            for c in clients { c.disconnect() }
            await cluster.stop(keepFiles: true)
            throw error
        }
        await cluster.stop(keepFiles: false)
    }

    static func lines(_ path: String, containing text: String) -> [Substring] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains(text) }
    }

    static func seconds(_ d: Duration) -> String {
        let c = d.components
        return String(format: "%.2fs", Double(c.seconds) + Double(c.attoseconds) / 1e18)
    }
}
