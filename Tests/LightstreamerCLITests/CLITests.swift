import Foundation
import Testing

/// The `lightstreamer` executable run as a process, without a server: argument checking (exit
/// code 4), `capabilities`, and the MPN commands of `lightstreamer session` that must answer
/// with `error` events instead of dying (docs/protocol/CLI.md).
/// Serialized, and every process is started on a thread of its own: `Process.run()` blocks
/// its thread until the child has started, and on Linux `DispatchQueue.global()` threads are
/// the Swift concurrency pool's, which other suites' in-process servers need.
@Suite(.serialized) struct CLITests {
    struct Result {
        var code: Int32
        var stdout: String
        var stderr: String
        /// stdout as JSON objects, one a line.
        var events: [[String: Any]] {
            stdout.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
        }
    }

    /// The built binary, next to the test bundle.
    static var binary: URL? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("lightstreamer")
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs the CLI with `arguments` and `input` on stdin; waits without blocking a thread.
    /// `environment` adds to the test's (each run gets an MPN token store of its own unless it
    /// sets `LS_MPN_STORE_DIR`); `whileRunning` is called with the stdout read so far once the
    /// process has started, before waiting for its exit.
    static func run(
        _ arguments: [String], input: String = "", environment: [String: String] = [:],
        whileRunning: (@Sendable (OutputCollector) async throws -> Void)? = nil
    ) async throws -> Result {
        let binary = try #require(Self.binary, "the lightstreamer binary is built next to the tests")
        let p = Process()
        p.executableURL = binary
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        let storeDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("cli-tests-\(UUID().uuidString)")
        env["LS_MPN_STORE_DIR"] = storeDirectory.path
        env.merge(environment) { _, new in new }
        // The run's own token store goes with the run (a caller's `LS_MPN_STORE_DIR` is the caller's).
        defer { if environment["LS_MPN_STORE_DIR"] == nil { try? FileManager.default.removeItem(at: storeDirectory) } }
        p.environment = env
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        p.standardError = stderr
        let out = OutputCollector(), err = OutputCollector()
        Self.collect(stdout, into: out)
        Self.collect(stderr, into: err)
        let exit = ExitStatusBox()
        p.terminationHandler = { exit.set($0.terminationStatus) }
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            Thread {
                do { try p.run() } catch {
                    c.resume(throwing: error)
                    return
                }
                c.resume()
                stdin.fileHandleForWriting.write(Data(input.utf8))
                try? stdin.fileHandleForWriting.close()
            }.start()
        }
        if let whileRunning {
            do {
                try await whileRunning(out)
            } catch {
                if p.isRunning { p.terminate() }
                throw error
            }
        }
        var code: Int32?
        while true {
            code = exit.value
            if code != nil { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !(out.finished && err.finished), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        return Result(code: code ?? -1, stdout: out.text, stderr: err.text)
    }

    static let device = ["--server", "http://127.0.0.1:9", "--device-token", "abcd", "--app-id", "com.example.app"]

    @Test(arguments: [
        ["mpn", "register", "--server", "http://127.0.0.1:9", "--device-token", "abcd", "--app-id", "a", "--platform", "Windows"],
        ["mpn", "register", "--server", "http://127.0.0.1:9", "--app-id", "a"],
        ["mpn", "register", "--server", "not an address", "--device-token", "abcd", "--app-id", "a"],
        ["mpn", "subscribe"] + device + ["--items", "i1", "--fields", "f1"],
        ["mpn", "subscribe"] + device + ["--mode", "RAW", "--items", "i1", "--fields", "f1", "--format", "{}"],
        ["mpn", "subscribe"] + device + ["--fields", "f1", "--format", "{}"],
        ["mpn", "subscribe"] + device + ["--items", "i1", "--format", "{}"],
        ["mpn", "subscribe"] + device + ["--items", "i1", "--fields", "f1", "--format", "{}", "--buffer-size", "0"],
        ["mpn", "subscribe"] + device + ["--items", "i1", "--fields", "f1", "--format", "{}", "--max-frequency", "fast"],
        ["mpn", "list"] + device + ["--status", "BOGUS"],
        ["mpn", "unsubscribe"] + device,
        ["mpn", "unsubscribe"] + device + ["sub1", "--status", "ALL"],
        ["mpn", "unsubscribe"] + device + ["--status", "ACTIVE"],
        ["mpn", "nonsense"],
        ["session", "--transport", "CARRIER-PIGEON"],
        ["session", "--retry-delay-ms", "0"],
    ])
    func badArgumentsExitWith4(arguments: [String]) async throws {
        let r = try await Self.run(arguments)
        #expect(r.code == 4, "\(arguments): \(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(!r.stderr.isEmpty)
    }

    @Test func capabilitiesIncludeMPN() async throws {
        let r = try await Self.run(["capabilities"])
        #expect(r.code == 0)
        let caps = try #require(r.events.first?["capabilities"] as? [String])
        #expect(caps.contains("mpn"))
    }

    @Test func sessionMPNCommandsNeverKillTheProgram() async throws {
        let input =
            [
                #"{"cmd":"mpn_subscribe","mpn":"m1","mode":"MERGE","items":["i1"],"fields":["f1"],"format":"{}"}"#,
                #"{"cmd":"mpn_reset_badge"}"#,
                #"{"cmd":"mpn_unsubscribe_filter","filter":"ALL"}"#,
                #"{"cmd":"mpn_register","platform":"Windows","app_id":"a","token":"t"}"#,
                #"{"cmd":"mpn_register","app_id":"com.example.app","token":"abcd"}"#,
                #"{"cmd":"mpn_subscribe","mpn":"m1","mode":"RAW","items":["i1"],"fields":["f1"],"format":"{}"}"#,
                #"{"cmd":"mpn_subscribe","mpn":"m1","mode":"MERGE","items":["i1"],"fields":["f1"]}"#,
                #"{"cmd":"mpn_unsubscribe_filter","filter":"BAD"}"#,
                #"{"cmd":"mpn_set_trigger","mpn":"nope","trigger":null}"#,
                #"{"cmd":"mpn_subscribe","mpn":"m1","mode":"MERGE","items":["i1"],"fields":["f1"],"format":"{}","trigger":"x > 1","coalescing":true}"#,
                #"{"cmd":"mpn_unsubscribe","mpn":"m1"}"#,
                #"{"cmd":"mpn_bogus"}"#,
                "not json",
                #"{"cmd":"exit"}"#,
            ].joined(separator: "\n") + "\n"
        let r = try await Self.run(["session", "--server", "http://127.0.0.1:9"], input: input)
        #expect(r.code == 0, "\(r.stderr)")
        let events = r.events
        #expect(events.first?["event"] as? String == "ready")
        let errors = events.filter { $0["event"] as? String == "error" }.compactMap { $0["message"] as? String }
        #expect(errors.count == 10, "\(errors)")
        #expect(errors.prefix(3).allSatisfy { $0 == "No MPNDevice Registered" }, "\(errors)")
        #expect(errors.contains("Specify property 'notificationFormat'"))
        // The valid subscription became ACTIVE (it waits for the session), then inactive again
        // when unsubscribed before being sent.
        let m1 = events.filter { $0["mpn"] as? String == "m1" }.compactMap { e -> String? in
            guard let name = e["event"] as? String else { return nil }
            return name == "mpn_status" ? "status \(e["status"] as? String ?? "")" : name
        }
        #expect(m1.contains("status ACTIVE"))
        #expect(m1.contains("mpn_unsubscribed"))
    }
}

/// A process's exit status, set from its termination handler.
final class ExitStatusBox: @unchecked Sendable {
    private let lock = NSLock()
    private var status: Int32?
    func set(_ s: Int32) { lock.withLock { status = s } }
    var value: Int32? { lock.withLock { status } }
}

extension CLITests {
    /// Reads `pipe` into `collector` until EOF, where the handler removes itself.
    ///
    /// Read until EOF in the handler: nil-ing it after the process's exit could lose a chunk it
    /// was still appending. And removed there, before the pipe is closed: a handler left in
    /// place keeps its dispatch source watching the descriptor after the pipe closes it, and
    /// once the number is reused (by the next test's pipes) libdispatch's event loop crashed on
    /// the stale registration (a CI run, in `_dispatch_event_loop_drain`, after a test whose
    /// server's output pipes were read this way).
    static func collect(_ pipe: Pipe, into collector: OutputCollector) {
        pipe.fileHandleForReading.readabilityHandler = { h in
            let d = h.availableData
            if d.isEmpty {
                h.readabilityHandler = nil
                collector.finish()
            } else {
                collector.append(d)
            }
        }
    }
}

/// Bytes read from a pipe on another thread.
final class OutputCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var ended = false
    func append(_ d: Data) { lock.withLock { data.append(d) } }
    /// EOF was read.
    func finish() { lock.withLock { ended = true } }
    var finished: Bool { lock.withLock { ended } }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}
