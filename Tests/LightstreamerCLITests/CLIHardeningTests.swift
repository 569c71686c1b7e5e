import Foundation
import Testing

/// Arguments that need no server: a `--trigger` starting with `-`, and what a command that never
/// reaches its server prints.
extension CLITests {
    @Test(arguments: [
        ["--trigger", "-1 < Double.parseDouble(${last_price})"],
        ["--trigger=-1 < Double.parseDouble(${last_price})"],
    ])
    func triggerStartingWithADashIsAValue(trigger: [String]) async throws {
        // Port 9 (discard) refuses: the arguments parse, then no session is made.
        let r = try await Self.run(
            [
                "mpn", "subscribe", "--server", "http://127.0.0.1:9", "--device-token", "abcd",
                "--app-id", "a", "--items", "i1", "--fields", "f1", "--format", "{}", "--timeout", "1",
            ]
                + trigger)
        #expect(r.code == 3, "\(r.stderr)")
        #expect(r.stderr.contains("no session with the server"), "\(r.stderr)")
    }

    @Test func noServerIsExplainedOnStderr() async throws {
        let r = try await Self.run(["send", "--server", "http://127.0.0.1:9", "--message", "x", "--timeout", "1"])
        #expect(r.code == 3)
        #expect(r.stderr.contains("no session with the server within 1 s"), "\(r.stderr)")
    }
}

/// Against a live server: MPN refusals with the server's code, the device-token policy, and a
/// server that dies while a command runs.
extension CLILiveServerTests {
    @Test func mpnSubscribeRefusalPrintsTheServersCodeAndMessage() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let device = ["--server", server.address, "--device-token", Self.randomToken(), "--app-id", "com.example.app", "--json"]
        let r = try await CLITests.run(
            ["mpn", "subscribe"] + device + [
                "--items", "item1", "--fields", "stock_name", "--format", #"{"aps":{"alert":"x"}}"#, "--data-adapter", "NO_SUCH_ADAPTER",
            ])
        #expect(r.code == 2, "\(r.stderr)")
        let line = r.stderr.split(separator: "\n").first { $0.hasPrefix("MPN subscription refused by the server: ") }
        let rest = try #require(line, "\(r.stderr)").dropFirst("MPN subscription refused by the server: ".count)
        // The code, then the server's message.
        let code = rest.split(separator: " ").first.flatMap { Int($0) }
        #expect(code != nil, "\(r.stderr)")
        #expect(rest.split(separator: " ").count > 1, "\(r.stderr)")
    }

    @Test func dashTriggerReachesTheServer() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let device = ["--server", server.address, "--device-token", Self.randomToken(), "--app-id", "com.example.app", "--json"]
        let trigger = "-1 < Double.parseDouble(${last_price})"
        let r = try await CLITests.run(
            ["mpn", "subscribe"] + device + [
                "--items", "item1", "--fields", "stock_name,last_price", "--format", #"{"aps":{"alert":"x"}}"#, "--trigger", trigger,
            ])
        #expect(r.code == 0, "\(r.stderr)")
        // The requested text until the server's values arrive (SUB- item), then the server's,
        // with the field named by its position; which comes first is a race.
        let reported = r.events.first?["trigger"] as? String
        #expect(
            reported == trigger || reported == "-1 < Double.parseDouble($[2])",
            "reported trigger: \(reported ?? "none")")
    }

    /// Default: each token is a device of its own. `--replace-stored-token`: the token replaces
    /// the last one registered for the app (same device on the server).
    @Test func deviceTokenKeysTheDeviceUnlessReplaceIsAsked() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("cli-store-\(UUID().uuidString)").path
        let env = ["LS_MPN_STORE_DIR": store]
        func register(_ token: String, _ extra: [String] = []) async throws -> String {
            let r = try await CLITests.run(
                [
                    "mpn", "register", "--server", server.address, "--device-token", token,
                    "--app-id", "com.example.app", "--json",
                ] + extra, environment: env)
            #expect(r.code == 0, "\(r.stderr)")
            return try #require(r.events.first?["device_id"] as? String, "\(r.stdout) \(r.stderr)")
        }
        let a = Self.randomToken(), b = Self.randomToken(), c = Self.randomToken()
        let idA = try await register(a)
        let idB = try await register(b)
        #expect(idA != idB)
        // A is still a device of its own.
        #expect(try await register(a) == idA)
        // The explicit option moves the last registered device (A) to token C.
        let idC = try await register(c, ["--replace-stored-token"])
        #expect(idC == idA)
        #expect(idC != idB)
        try? FileManager.default.removeItem(atPath: store)
    }

    @Test func serverDyingMidCommandIsReported() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let r = try await CLITests.run([
            "subscribe", "--server", server.address, "--items", "item1", "--fields", "stock_name",
            "--json", "--timeout", "25",
        ]) { stdout in
            // Once the session is up, the server dies.
            let deadline = ContinuousClock.now + .seconds(20)
            while !stdout.text.contains(#""status":"CONNECTED:"#), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            kill(server.process.processIdentifier, SIGKILL)
        }
        #expect(r.stdout.contains(#""status":"CONNECTED:"#), "\(r.stdout)")
        #expect(r.code == 3, "\(r.stderr)")
        #expect(r.stderr.contains("connection to the server lost"), "\(r.stderr)")
    }

    static func randomToken() -> String {
        (0..<16).map { _ in String(format: "%02x", Int.random(in: 0..<256)) }.joined()
    }
}
