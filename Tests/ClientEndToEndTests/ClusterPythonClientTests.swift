import Foundation
import Testing

/// The acceptance run of docs/CLUSTER.md with the official Python client: nginx in front of three
/// nodes sharing one PostgreSQL database (MPN on), 30 sessions of `lightstreamer-client-lib` on
/// the four transports (Tests/Interop/cluster_driver.py), each receiving its item and having a
/// message processed by its own node; then one node is killed (`kill -9`): its clients must get a
/// new session on another node, receive and send there, and the others notice nothing.
/// Needs nginx, `LS_TEST_POSTGRES_URL` and the interop venv (scripts/test.sh provides all three;
/// CI fails without them).
@Suite(
    .serialized, .timeLimit(.minutes(3)),
    .enabled(
        if: (ClusterProcesses.nginx != nil && ClusterProcesses.postgresURL != nil && OfficialPythonClient.python != nil)
            || ProcessInfo.processInfo.environment["CI"] != nil,
        "nginx, LS_TEST_POSTGRES_URL or the interop venv missing (scripts/test.sh provides them)"))
struct ClusterPythonClientTests {
    static let nodeNames = ["node-1", "node-2", "node-3"]
    static let sessions = 30

    @Test func thirtyOfficialClientsThenOneNodeKilled() async throws {
        let url = try #require(ClusterProcesses.postgresURL, "LS_TEST_POSTGRES_URL is not set (scripts/test.sh sets it)")
        let python = try #require(OfficialPythonClient.python, "no venv with lightstreamer-client-lib (scripts/test.sh makes it)")
        let cluster = try await ClusterOnPostgres.start(
            names: Self.nodeNames, postgresURL: url, failTimeout: 10,
            label: "cluster-python")
        let dir = cluster.dir
        let balancerPort = cluster.balancerPort
        var driverProcess: ChildProcess?
        do {
            let signal = dir.appendingPathComponent("killed")
            let driver = try await ChildProcess(
                executable: URL(fileURLWithPath: python),
                arguments: [
                    OfficialPythonClient.interopDir.appendingPathComponent("cluster_driver.py").path,
                    "--url", "http://127.0.0.1:\(balancerPort)", "--sessions", String(Self.sessions),
                    "--signal-file", signal.path,
                ],
                output: dir.appendingPathComponent("driver.out"))
            driverProcess = driver

            // 1. Thirty sessions, spread, receiving, each with a message processed by its node.
            var ready: [String: Any]?
            let readyDeadline = ContinuousClock.now + .seconds(120)
            while ready == nil, ContinuousClock.now < readyDeadline, driver.process.isRunning {
                ready = OfficialPythonClient.events("ready", in: driver.text).first
                if ready == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            ready = ready ?? OfficialPythonClient.events("ready", in: driver.text).first
            let report = try #require(ready, "the driver did not get ready: \(driver.text.suffix(3_000))")
            #expect(report["ok"] as? Bool == true, "\(report["detail"] ?? "")")
            let clients = try #require(report["clients"] as? [[String: Any]])
            #expect(clients.count == Self.sessions)
            let serverNames = Self.nodeNames.map { "Lightstreamer Swift Server (\($0))" }
            for transport in ["WS-STREAMING", "HTTP-STREAMING", "WS-POLLING", "HTTP-POLLING"] {
                let on = clients.filter { $0["transport"] as? String == transport }
                #expect(on.count >= 7, "\(transport): \(on.count) sessions")
                #expect(on.allSatisfy { $0["message"] as? String == "processed" }, "\(transport): \(on)")
            }
            let perNode = Dictionary(grouping: clients, by: { $0["node"] as? String ?? "?" }).mapValues(\.count)
            #expect(Set(perNode.keys) == Set(serverNames), "sessions per node: \(perNode)")
            // HTTP binds, controls and messages through the node paths only (the control link).
            let access = (try? String(contentsOf: dir.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
            for line in access.split(separator: "\n") where line.contains("\"POST /lightstreamer/") {
                #expect(line.contains("/lightstreamer/create_session.txt"), "a non-create request through the pool: \(line)")
            }

            // 2. kill -9 the node of the first client.
            let victimServer = try #require(clients.first?["node"] as? String)
            let victim = try #require(Self.nodeNames.first { "Lightstreamer Swift Server (\($0))" == victimServer })
            await cluster.kill(victim)
            try Data(victimServer.utf8).write(to: signal)

            // 3. Its clients back elsewhere, the others unaware.
            var failover: [String: Any]?
            let deadline = ContinuousClock.now + .seconds(90)
            while failover == nil, ContinuousClock.now < deadline {
                failover = OfficialPythonClient.events("failover", in: driver.text).first
                if failover == nil {
                    guard driver.process.isRunning else { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            failover = failover ?? OfficialPythonClient.events("failover", in: driver.text).first
            let result = try #require(failover, "no failover report: \(driver.text.suffix(3_000))")
            #expect(result["ok"] as? Bool == true, "\(result["detail"] ?? "")")
            let affected = (result["affected"] as? [[String: Any]]) ?? []
            #expect(affected.count == perNode[victimServer], "\(affected)")
            let seconds = affected.compactMap { $0["seconds"] as? Double }.sorted()
            for a in affected { print("  client \(a["i"] ?? "?") \(a["transport"] ?? "?"): \(a["statuses"] ?? "")") }
            print(
                "cluster with the official Python client: \(clients.count) sessions \(perNode); after kill -9 of \(victim), "
                    + "its \(affected.count) clients received again after \(seconds.map { String(format: "%.2fs", $0) })")
            for _ in 0..<250 where driver.process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            #expect(!driver.process.isRunning && driver.process.terminationStatus == 0, "driver: \(driver.text.suffix(2_000))")
        } catch {
            await driverProcess?.stop()
            await cluster.stop(keepFiles: true)
            throw error
        }
        await driverProcess?.stop()
        await cluster.stop(keepFiles: false)
    }
}
