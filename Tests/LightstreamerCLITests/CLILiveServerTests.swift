import Foundation
import Testing

/// The `lightstreamer` executable against a live `lightstreamer-server` (the built binary,
/// spawned on a free port with its MPN Module on a temporary SQLite file; having no APNs or FCM
/// credentials it writes each notification as a JSON line on standard error).
@Suite(.serialized) struct CLILiveServerTests {
    /// A spawned `lightstreamer-server`; stop it with `stop()`.
    final class LiveServer: @unchecked Sendable {
        let process: Process
        let port: Int
        let stdout: OutputCollector
        let stderr: OutputCollector
        let directory: URL

        private init(process: Process, port: Int, stdout: OutputCollector, stderr: OutputCollector, directory: URL) {
            self.process = process
            self.port = port
            self.stdout = stdout
            self.stderr = stderr
            self.directory = directory
        }

        var address: String { "http://127.0.0.1:\(port)" }

        /// The built server binary, next to the CLI's.
        static var binary: URL? {
            CLITests.binary.map { $0.deletingLastPathComponent().appendingPathComponent("lightstreamer-server") }
                .flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil }
        }

        /// Spawns the server on port 0 and waits (without blocking a thread) for its ready line.
        /// `arguments` are added to the command line (later ones win).
        static func start(arguments extra: [String] = []) async throws -> LiveServer {
            let binary = try #require(binary, "the lightstreamer-server binary is built next to the tests")
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cli-live-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let p = Process()
            p.executableURL = binary
            p.arguments =
                ["--port", "0", "--mpn-store", dir.appendingPathComponent("mpn.sqlite").path, "--log-level", "warning"]
                + extra
            let out = Pipe(), err = Pipe()
            p.standardOutput = out
            p.standardError = err
            p.standardInput = FileHandle.nullDevice
            let stdout = OutputCollector(), stderr = OutputCollector()
            CLITests.collect(out, into: stdout)
            CLITests.collect(err, into: stderr)
            // Off the cooperative pool: `run()` blocks until the child has started.
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                Thread { c.resume(with: Result { try p.run() }) }.start()
            }
            let deadline = Date().addingTimeInterval(30)
            while true {
                // "lightstreamer-server ready on http://127.0.0.1:PORT"
                if let line = stdout.text.split(separator: "\n").first(where: { $0.hasPrefix("lightstreamer-server ready on ") }),
                    let port = line.split(separator: ":").last.flatMap({ Int($0) })
                {
                    return LiveServer(process: p, port: port, stdout: stdout, stderr: stderr, directory: dir)
                }
                if !p.isRunning || Date() > deadline {
                    if p.isRunning { p.terminate() }
                    throw CLITestError("server not ready: \(stdout.text) \(stderr.text)")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        func stop() async {
            if process.isRunning { process.terminate() }
            for _ in 0..<100 where process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
            // Its pipes' handlers end at EOF (`CLITests.collect`), before the pipes are closed.
            for _ in 0..<250 where !(stdout.finished && stderr.finished) { try? await Task.sleep(for: .milliseconds(20)) }
            try? FileManager.default.removeItem(at: directory)
        }

        /// Notifications the MPN Module wrote (no provider credentials), as JSON objects.
        var notifications: [[String: Any]] {
            stderr.text.split(separator: "\n").compactMap {
                guard $0.hasPrefix("{") else { return nil }
                return (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
        }
    }

    @Test func subscribeCountAndSendAgainstTheDemoServer() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let sub = try await CLITests.run([
            "subscribe", "--server", server.address, "--items", "item1,item2",
            "--fields", "stock_name,last_price", "--count", "3", "--json", "--timeout", "20",
        ])
        #expect(sub.code == 0, "\(sub.stderr)")
        let updates = sub.events.filter { $0["event"] as? String == "update" }
        #expect(updates.count == 3)
        #expect(Set(updates.prefix(2).compactMap { $0["item"] as? String }) == ["item1", "item2"])
        #expect(updates.allSatisfy { (($0["fields"] as? [String: Any])?["stock_name"] as? String)?.isEmpty == false })
        #expect(sub.events.contains { $0["event"] as? String == "subscribed" })
        #expect(sub.events.last?["status"] as? String == "DISCONNECTED")

        let send = try await CLITests.run(["send", "--server", server.address, "--message", "CHAT|hello from the CLI", "--json"])
        #expect(send.code == 0, "\(send.stderr)")
        #expect(send.events.first?["event"] as? String == "message_processed")
        // Not JSON: one line.
        let plain = try await CLITests.run(["send", "--server", server.address, "--message", "CHAT|again", "--sequence", "seq1"])
        #expect(plain.code == 0)
        #expect(plain.stdout == "processed\n")
    }

    /// register, subscribe with a trigger (the module writes the notification), list, reset
    /// the badge, unsubscribe all, list again (empty).
    @Test func mpnCommandsAgainstTheMPNModule() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let token = (0..<16).map { _ in String(format: "%02x", Int.random(in: 0..<256)) }.joined()
        let device = [
            "--server", server.address, "--device-token", token, "--app-id", "com.example.app", "--platform", "Apple",
            "--json",
        ]

        let reg = try await CLITests.run(["mpn", "register"] + device)
        #expect(reg.code == 0, "\(reg.stderr)")
        let deviceId = try #require(reg.events.first?["device_id"] as? String)
        #expect(reg.events.first?["status"] as? String == "REGISTERED")

        let format = #"{"aps":{"alert":"${stock_name} is at ${last_price}"}}"#
        let subscribe = try await CLITests.run(
            ["mpn", "subscribe"] + device + [
                "--mode", "MERGE", "--items", "item1", "--fields", "stock_name,last_price", "--format", format,
                "--trigger", "Double.parseDouble(${last_price}) > 1.0",
            ])
        #expect(subscribe.code == 0, "\(subscribe.stderr)")
        let created = try #require(subscribe.events.first)
        let id = try #require(created["id"] as? String)
        // The trigger holds at once, so the module may have triggered the subscription by the
        // time the CLI reports it (seen once in a full parallel run): both are an active one.
        #expect(["SUBSCRIBED", "TRIGGERED"].contains(created["status"] as? String), "\(String(describing: created["status"]))")
        // The CLI reports the format and trigger as the server holds them (named arguments
        // turned into positions) once the subscription's status item has told it, else as
        // requested: which one comes first is a race between that update and the SUBSCRIBED
        // event, so either is right, and nothing else is.
        let formats = [format, #"{"aps":{"alert":"$[1] is at $[2]"}}"#]
        #expect(formats.contains { $0 == created["format"] as? String }, "\(String(describing: created["format"]))")
        let triggers = ["Double.parseDouble(${last_price}) > 1.0", "Double.parseDouble($[2]) > 1.0"]
        #expect(triggers.contains { $0 == created["trigger"] as? String }, "\(String(describing: created["trigger"]))")

        // The trigger holds at once (item1 is above 1.0): one notification for this subscription.
        let deadline = Date().addingTimeInterval(15)
        while !server.notifications.contains(where: { $0["subscriptionId"] as? String == id }), Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let sent = server.notifications.filter { $0["subscriptionId"] as? String == id }
        #expect(sent.count == 1)
        #expect(sent.first?["deviceId"] as? String == deviceId)
        #expect(sent.first?["triggered"] as? Bool == true)

        let list = try await CLITests.run(["mpn", "list"] + device)
        #expect(list.code == 0, "\(list.stderr)")
        #expect(list.events.count == 1)
        #expect(list.events.first?["id"] as? String == id)
        #expect(list.events.first?["status"] as? String == "TRIGGERED")
        #expect(list.events.first?["group"] as? String == "item1")
        #expect(list.events.first?["trigger"] is String)

        let triggered = try await CLITests.run(["mpn", "list"] + device + ["--status", "SUBSCRIBED"])
        #expect(triggered.code == 0)
        #expect(triggered.events.isEmpty)

        let badge = try await CLITests.run(["mpn", "reset-badge"] + device)
        #expect(badge.code == 0, "\(badge.stderr)")
        #expect(badge.events.first?["badge_reset"] as? Bool == true)

        let unsubscribe = try await CLITests.run(["mpn", "unsubscribe"] + device + ["--status", "ALL"])
        #expect(unsubscribe.code == 0, "\(unsubscribe.stderr)")
        #expect(unsubscribe.events.map { $0["id"] as? String } == [id])
        #expect(unsubscribe.events.first?["status"] as? String == "UNKNOWN")

        let empty = try await CLITests.run(["mpn", "list"] + device)
        #expect(empty.code == 0)
        #expect(empty.events.isEmpty)
    }

    /// README, "Running the server": the two `lightstreamer mpn` commands as written, only
    /// pointed at this server's port (the README's server listens on the default 8080).
    @Test func readmeMPNExampleWorks() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let register = try await CLITests.run([
            "mpn", "register", "--device-token", "0a1b2c", "--app-id", "com.example.app",
            "--platform", "Apple", "--server", server.address,
        ])
        #expect(register.code == 0, "\(register.stderr)")
        #expect(register.stdout.hasSuffix(" REGISTERED\n"))
        let subscribe = try await CLITests.run([
            "mpn", "subscribe", "--device-token", "0a1b2c", "--app-id", "com.example.app", "--platform", "Apple",
            "--mode", "MERGE", "--items", "item1", "--fields", "stock_name,last_price",
            "--format", #"{"aps":{"alert":"${stock_name} is at ${last_price}"}}"#,
            "--trigger", "Double.parseDouble(${last_price}) > 10.0", "--server", server.address,
        ])
        #expect(subscribe.code == 0, "\(subscribe.stderr)")
        let id = try #require(subscribe.stdout.split(separator: " ").first.map(String.init))
        #expect(subscribe.stdout == "\(id) SUBSCRIBED\n", "stderr: \(subscribe.stderr)")
        // "writes each notification it would send as a JSON line on standard error"
        let deadline = Date().addingTimeInterval(15)
        while !server.notifications.contains(where: { $0["subscriptionId"] as? String == id }), Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let n = try #require(server.notifications.first { $0["subscriptionId"] as? String == id })
        let alert = ((n["payload"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? String
        #expect(alert?.contains(" is at ") == true)
    }
}

struct CLITestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
