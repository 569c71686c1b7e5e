import Foundation
import NIOCore
import NIOPosix

/// Child processes of the cluster test: `lightstreamer-server` nodes and nginx, on loopback,
/// each with its output in a file of the test's directory.
final class ChildProcess: Sendable {
    let process: Process
    let output: URL

    init(executable: URL, arguments: [String], output: URL, append: Bool = false) async throws {
        if !append || !FileManager.default.fileExists(atPath: output.path) {
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: output)
        try handle.seekToEnd()
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        self.output = output
        let p = process
        // Off the cooperative pool: `run()` blocks its thread until the child has started.
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            Thread { c.resume(with: Result { try p.run() }) }.start()
        }
    }

    var text: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }

    /// SIGTERM, then SIGKILL if still running after `graceSeconds`.
    func stop(graceSeconds: Double = 3) async {
        if process.isRunning { process.terminate() }
        for _ in 0..<Int(graceSeconds * 50) where process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

enum ClusterProcesses {
    /// The PostgreSQL database of the MPN tests (scripts/test.sh starts one and sets it).
    static var postgresURL: String? {
        let v = ProcessInfo.processInfo.environment["LS_TEST_POSTGRES_URL"]
        return v?.isEmpty == false ? v : nil
    }

    /// An executable built next to the test bundle.
    static func built(_ name: String) -> URL? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent(name)
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// nginx from PATH or /usr/sbin (Debian's package).
    static var nginx: URL? {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/sbin"]
        return dirs.lazy.map { URL(fileURLWithPath: $0).appendingPathComponent("nginx") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// A loopback port free right now (bound to port 0, then released).
    static func freePort(group: any EventLoopGroup) async throws -> Int {
        let channel = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }

    /// Starts a server node: `--node-name`, `--control-link`, on `port` (0: a free one), no MPN
    /// unless `options` say otherwise (`["--config", file]`). Its output is appended to
    /// `<name>.log` (a restarted node keeps its earlier lines).
    static func startNode(
        name: String, controlLink: String, directory: URL, port: Int = 0,
        options: [String] = ["--no-mpn"]
    ) async throws -> (ChildProcess, Int) {
        guard let binary = built("lightstreamer-server") else { throw TestError("lightstreamer-server is not built") }
        let output = directory.appendingPathComponent("\(name).log")
        let earlier = (try? String(contentsOf: output, encoding: .utf8))?.count ?? 0
        let child = try await ChildProcess(
            executable: binary,
            arguments: [
                "--port", String(port), "--node-name", name, "--control-link", controlLink, "--log-level", "notice",
            ] + options, output: output, append: true)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, child.process.isRunning {
            if let line = String(child.text.dropFirst(earlier)).split(separator: "\n").first(where: {
                $0.hasPrefix("lightstreamer-server ready on ")
            }),
                let port = line.split(separator: ":").last.flatMap({ Int($0) })
            {
                return (child, port)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        await child.stop()
        throw TestError("node \(name) not ready: \(child.text)")
    }

    /// Starts nginx in the foreground with `config` (written to the directory) and waits until
    /// it accepts connections on `port`.
    static func startNginx(config: String, port: Int, directory: URL, group: any EventLoopGroup) async throws -> ChildProcess {
        guard let nginx else { throw TestError("nginx not found") }
        let file = directory.appendingPathComponent("nginx.conf")
        try Data(config.utf8).write(to: file)
        let child = try await ChildProcess(
            executable: nginx,
            arguments: [
                "-p", directory.path, "-c", file.path,
                "-e", directory.appendingPathComponent("error.log").path,
            ],
            output: directory.appendingPathComponent("nginx.out"))
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, child.process.isRunning {
            if let c = try? await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port).get() {
                try? await c.close()
                return child
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        await child.stop()
        let errors = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        throw TestError("nginx did not start: \(child.text) \(errors)")
    }
}

extension ChildProcess {
    /// SIGKILL: the process dies at once, with no drain and no clean MPN stop.
    func killNow() async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        for _ in 0..<250 where process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }
}
