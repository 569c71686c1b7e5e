import Foundation
import NIOPosix
import Testing

/// The `lightstreamer-server` executable as a cluster node: its command-line options, the node
/// in its log lines, and SIGTERM draining.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ClusterProcessTests {
    /// Runs the server with `arguments` and returns its exit status and output (it must exit
    /// by itself within 30 s).
    static func runToExit(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let binary = try #require(SpawnedServer.binary)
        let p = Process()
        p.executableURL = binary
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        for _ in 0..<1500 where p.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(arguments: [
        (["--control-link", "http://a.example.com"], "without a scheme"),
        (["--control-link", "a.example.com:99999"], "not a number from 1 to 65535"),
        (["--control-link", "a.example.com/lightstreamer"], "clients add it themselves"),
        (["--node-name", "a b"], "invalid node name"),
        (["--drain-millis", "-5"], "--drain-millis"),
    ])
    func badOptionsStopTheStart(arguments: [String], message: String) async throws {
        let (status, output) = try await Self.runToExit(["--port", "0", "--no-mpn"] + arguments)
        #expect(status != 0)
        #expect(output.contains(message), "\(output)")
    }

    @Test func badConfigurationValueStopsTheStart() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("server.json")
        try Data(#"{"demo": true, "controlLink": "node-a.example.com:8080/lightstreamer"}"#.utf8).write(to: config)
        let (status, output) = try await Self.runToExit(["--port", "0", "--no-mpn", "--config", config.path])
        #expect(status != 0)
        #expect(output.contains("controlLink") && output.contains("clients add it themselves"), "\(output)")
    }

    @Test func logLinesCarryTheNode() async throws {
        let server = try await SpawnedServer.start(arguments: [
            "--log-level", "info", "--node-name", "node-x",
            "--control-link", "127.0.0.1:1/node-x",
        ])
        defer { Task { await server.stop() } }
        let listening = server.log.split(separator: "\n").first { $0.contains("listening") } ?? ""
        #expect(listening.contains("node=node-x"), "\(server.log)")
        #expect(server.log.contains("controlLink=127.0.0.1:1/node-x"), "\(server.log)")
    }

    @Test func sigtermDrainsThenExits() async throws {
        let server = try await SpawnedServer.start(arguments: ["--node-name", "node-d", "--drain-millis", "60000"])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer {
            Task {
                await server.stop()
                try? await group.shutdownGracefully()
            }
        }
        let ws = try await ClusterFrontTests.webSocketSession(port: server.port, group: group)
        #expect(await ws.waitFor("CONOK,", seconds: 10), "\(ws.text)")
        kill(server.process.processIdentifier, SIGTERM)
        // Out of rotation, the session still there.
        var ready = ""
        for _ in 0..<100 {
            ready = try await ClusterFrontTests.get("/health/ready", port: server.port, group: group)
            if ready.hasPrefix("HTTP/1.1 503") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(ready.hasPrefix("HTTP/1.1 503") && ready.contains("draining") && ready.contains("node-d"), "\(ready)")
        let late = try await ClusterFrontTests.webSocketSession(port: server.port, group: group, cid: "late")
        #expect(await late.waitFor("CONERR,5,"), "\(late.text)")
        #expect(server.process.isRunning)
        // The last session leaves: the process exits at once, cleanly.
        try await ws.wsText("control\r\nLS_reqId=1&LS_op=destroy")
        #expect(await ws.waitFor("END,31,"), "\(ws.text)")
        for _ in 0..<250 where server.process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!server.process.isRunning, "still running 5 s after its last session left")
        if !server.process.isRunning { #expect(server.process.terminationStatus == 0) }
        await ws.close()
        await late.close()
    }

    @Test func sigtermDrainPeriodEndsWithEnd48() async throws {
        let server = try await SpawnedServer.start(arguments: ["--drain-millis", "500"])
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer {
            Task {
                await server.stop()
                try? await group.shutdownGracefully()
            }
        }
        let ws = try await ClusterFrontTests.webSocketSession(port: server.port, group: group)
        #expect(await ws.waitFor("CONOK,", seconds: 10), "\(ws.text)")
        kill(server.process.processIdentifier, SIGTERM)
        #expect(await ws.waitFor("END,48,", seconds: 10), "\(ws.text)")
        for _ in 0..<250 where server.process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!server.process.isRunning)
        await ws.close()
    }
}
