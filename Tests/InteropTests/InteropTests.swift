import Foundation
import LightstreamerServer
import Testing

/// The official Lightstreamer Python client (`lightstreamer-client-lib`, pinned in
/// `Tests/Interop/requirements.txt`) against our server, on each of the four transports. The
/// scenarios live in `Tests/Interop/interop_driver.py`. Skipped only when Python with venv/pip
/// is not there.
@Suite(.serialized) struct InteropTests {
    static let interopDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Interop")

    static var python: String? {
        for candidate in ["/usr/bin/python3", "/usr/local/bin/python3"] + PATHCandidates()
        where FileManager.default.isExecutableFile(atPath: candidate) {
            if let r = try? run(candidate, ["-c", "import venv, ensurepip"], timeout: 20), r.status == 0 { return candidate }
        }
        return nil
    }

    static func PATHCandidates() -> [String] {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/python3" }
    }

    static let pythonAvailable = python != nil

    @Test(
        .enabled(if: pythonAvailable, "python3 with venv and pip is not available: interop with the official client skipped"),
        .timeLimit(.minutes(5)))
    func officialPythonClientOnEveryTransport() async throws {
        let python = try #require(Self.python)
        let venvPython = try await withCheckedThrowingContinuation { c in
            Thread { c.resume(with: Result { try Self.prepareVenv(python: python) }) }.start()
        }

        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.adapterSetAliases = ["DEFAULT": "DEMO"]
        let demo = DemoAdapters.makeDemoAdapterSet(
            options: .init(
                stockUpdatesPerSecond: 5, counterUpdatesPerSecond: 10,
                portfolioChangesPerSecond: 1))
        let server = LightstreamerServer(options: options, adapterSets: [demo])
        try await server.start()
        defer { Task { await server.shutdown() } }
        let port = try #require(server.port)

        let transports = ["WS-STREAMING", "HTTP-STREAMING", "WS-POLLING", "HTTP-POLLING"]
        let driver = Self.interopDir.appendingPathComponent("interop_driver.py").path
        // The four transports run side by side, each in its own client process.
        let results = try await withThrowingTaskGroup(of: (String, ProcessResult).self) { group in
            for t in transports {
                group.addTask {
                    let r = try await Self.runOffPool(
                        venvPython,
                        [
                            driver, "--port", String(port), "--transport", t,
                            "--refused-code", String(DemoAdapters.refusedLoginCode),
                            "--chat-fields", "message", "timestamp", "IP", "nick",
                        ],
                        timeout: 200)
                    return (t, r)
                }
            }
            var all: [(String, ProcessResult)] = []
            for try await r in group { all.append(r) }
            return all.sorted { transports.firstIndex(of: $0.0) ?? 0 < transports.firstIndex(of: $1.0) ?? 0 }
        }
        var summary: [String] = []
        for (transport, r) in results {
            let lines = r.stdout.split(separator: "\n").map(String.init)
            var scenarios: [String: Bool] = [:]
            for line in lines {
                guard let data = line.data(using: .utf8),
                    let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                    let name = obj["scenario"] as? String, let ok = obj["ok"] as? Bool
                else { continue }
                scenarios[name] = ok
                summary.append("\(transport) \(name): \(ok ? "ok" : "FAILED") — \(obj["detail"] ?? "") (\(obj["seconds"] ?? "?") s)")
            }
            #expect(r.status == 0, "\(transport): driver exited \(r.status)\n\(r.stdout)\n\(r.stderr.suffix(3000))")
            for name in ["merge_snapshot", "distinct", "message", "command", "raw", "recovery", "refused_login"] {
                #expect(scenarios[name] == true, "\(transport) \(name) did not pass")
            }
        }
        print("Interop with lightstreamer-client-lib:\n" + summary.joined(separator: "\n"))
    }

    // MARK: - Helpers

    /// Both pinned packages: the official client and the official Remote Adapter SDK.
    static let importCheck = "import lightstreamer.client, lightstreamer_adapter"

    /// Creates (once) the venv with the pinned requirements; returns its python.
    static func prepareVenv(python: String) throws -> String {
        // CI (scripts/test.sh) prepares the venv and names its python.
        if let given = ProcessInfo.processInfo.environment["LS_INTEROP_PYTHON"], FileManager.default.isExecutableFile(atPath: given),
            let r = try? run(given, ["-c", importCheck], timeout: 30), r.status == 0
        {
            return given
        }
        let venv = interopDir.appendingPathComponent(".venv")
        let venvPython = venv.appendingPathComponent("bin/python").path
        let requirements = interopDir.appendingPathComponent("requirements.txt").path
        if FileManager.default.isExecutableFile(atPath: venvPython),
            let r = try? run(venvPython, ["-c", importCheck], timeout: 30), r.status == 0
        {
            return venvPython
        }
        let created = try run(python, ["-m", "venv", venv.path], timeout: 120)
        try #require(created.status == 0, "python3 -m venv failed: \(created.stderr)")
        let pip = try run(venvPython, ["-m", "pip", "install", "--disable-pip-version-check", "-q", "-r", requirements], timeout: 180)
        try #require(pip.status == 0, "pip install failed: \(pip.stdout)\n\(pip.stderr)")
        return venvPython
    }

    struct ProcessResult: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// `run` on a thread of its own, so that waiting never blocks the cooperative pool (the
    /// in-process server needs it). Not on `DispatchQueue.global()`: on Linux its threads are
    /// the ones the Swift concurrency pool runs on, so blocking them starves every task.
    static func runOffPool(_ path: String, _ arguments: [String], timeout: Double) async throws -> ProcessResult {
        try await withCheckedThrowingContinuation { c in
            Thread { c.resume(with: Result { try run(path, arguments, timeout: timeout) }) }.start()
        }
    }

    /// Runs a program to completion, killing it after `timeout` seconds.
    static func run(_ path: String, _ arguments: [String], timeout: Double) throws -> ProcessResult {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let killer = DispatchWorkItem { if p.isRunning { p.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        // Read both pipes fully (a full pipe would block the child).
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        Thread {
            outData = out.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }.start()
        group.enter()
        Thread {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }.start()
        p.waitUntilExit()
        group.wait()
        killer.cancel()
        return ProcessResult(
            status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
