import Foundation
import NIOPosix
import Testing

/// The built `lightstreamer-server` run as a child process on a free port, with a
/// configuration file of the test's, for attacks that could kill a process: each attack is
/// followed by `assertHealthy`, which checks that the process is alive, its memory bounded,
/// and that a fresh session gets updates within seconds.
final class SpawnedServer: @unchecked Sendable {
    let process: Process
    let port: Int
    let directory: URL
    let output: URL

    private init(process: Process, port: Int, directory: URL, output: URL) {
        self.process = process
        self.port = port
        self.directory = directory
        self.output = output
    }

    /// The server binary, next to the test bundle.
    static var binary: URL? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("lightstreamer-server")
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// Starts the server with the DEMO data and `limits`/`timeouts`/`front` sections (JSON objects),
    /// and an `admin` section when given; `arguments` go after the default ones (a repeated option
    /// takes the later value); `environment` is added to (or replaces entries of) this process's.
    static func start(
        limits: String = "{}", timeouts: String = "{}", front: String = "{}", adapterSets: String = "[]",
        admin: String? = nil, arguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> SpawnedServer {
        let binary = try #require(binary, "the lightstreamer-server binary is built next to the tests")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("adversarial-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let config = dir.appendingPathComponent("server.json")
        let adminSection = admin.map { #", "admin": \#($0)"# } ?? ""
        try Data(
            #"{"demo": true, "limits": \#(limits), "timeouts": \#(timeouts), "front": \#(front), "adapterSets": \#(adapterSets)\#(adminSection)}"#
                .utf8
        ).write(to: config)
        let output = dir.appendingPathComponent("output.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        let p = Process()
        p.executableURL = binary
        p.arguments =
            [
                "--port", "0", "--config", config.path, "--mpn-store", dir.appendingPathComponent("mpn.sqlite").path,
                "--log-level", "warning",
            ] + arguments
        p.standardOutput = handle
        p.standardError = handle
        p.standardInput = FileHandle.nullDevice
        if !environment.isEmpty {
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        // Off the cooperative pool: `run()` blocks its thread until the child has started.
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            Thread { c.resume(with: Result { try p.run() }) }.start()
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, p.isRunning {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("lightstreamer-server ready on ") }),
                let port = line.split(separator: ":").last.flatMap({ Int($0) })
            {
                return SpawnedServer(process: p, port: port, directory: dir, output: output)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        if p.isRunning { p.terminate() }
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        throw AdversarialError("server not ready: \(text)")
    }

    var log: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }

    /// Resident memory in bytes (Linux: /proc; nil elsewhere).
    var residentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        let kb = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
        return kb.map { $0 * 1024 }
    }

    /// Open file descriptors of the server (Linux: /proc; nil elsewhere).
    var openFiles: Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd"))?.count
    }

    /// After an attack: the process is alive, its memory under `maxResidentMB`, and a fresh
    /// WebSocket session gets an update of `item1` within 15 seconds.
    func assertHealthy(
        after attack: String, maxResidentMB: Int = 400, group: MultiThreadedEventLoopGroup,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(process.isRunning, "server died after \(attack): \(log.suffix(2_000))", sourceLocation: sourceLocation)
        guard process.isRunning else { return }
        if let rss = residentBytes {
            #expect(rss < maxResidentMB << 20, "after \(attack): resident memory \(rss >> 20) MB", sourceLocation: sourceLocation)
        }
        let ws = try await RawTestConnection.webSocket(port: port, group: group)
        defer { Task { await ws.close() } }
        #expect(
            await ws.waitFor("HTTP/1.1 101", seconds: 10), "after \(attack): no upgrade: \(ws.text)",
            sourceLocation: sourceLocation)
        try await ws.wsText("create_session\r\nLS_adapter_set=DEMO&LS_cid=adversarial&LS_send_sync=false")
        try await ws.wsText("control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=item1&LS_schema=last_price&LS_snapshot=true")
        #expect(
            await ws.waitFor("U,1,1,", seconds: 15), "after \(attack): no update for a fresh session: \(ws.text.suffix(500))",
            sourceLocation: sourceLocation)
    }

    /// A counter or gauge of the server's `/metrics` (nil when absent).
    func metric(_ name: String, group: MultiThreadedEventLoopGroup) async throws -> Double? {
        let c = try await RawTestConnection.connect(port: port, group: group)
        defer { Task { await c.close() } }
        try await c.send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        // The whole response (`Connection: close`): the series are in no fixed order.
        _ = await c.waitClosed(seconds: 10)
        let line = c.text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    func stop() async {
        if process.isRunning { process.terminate() }
        for _ in 0..<100 where process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a started server and a client event loop group, and stops both.
    static func with(
        limits: String = "{}", timeouts: String = "{}", front: String = "{}", adapterSets: String = "[]",
        admin: String? = nil, _ body: (SpawnedServer, MultiThreadedEventLoopGroup) async throws -> Void
    ) async throws {
        let server = try await start(limits: limits, timeouts: timeouts, front: front, adapterSets: adapterSets, admin: admin)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await body(server, group)
        } catch {
            await server.stop()
            try? await group.shutdownGracefully()
            throw error
        }
        await server.stop()
        try? await group.shutdownGracefully()
    }
}

struct AdversarialError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
