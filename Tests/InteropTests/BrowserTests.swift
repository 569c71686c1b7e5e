import Foundation
import LightstreamerClient
import LightstreamerServer
import Testing

/// The server's own pages in a real browser: headless Chromium (Debian's `chromium`, installed
/// by scripts/test.sh) driven through the DevTools protocol by `Tests/Interop/browser_driver.py`
/// (aiohttp from the interop venv). Loads `/` and `/dashboard`, waits for live values, checks
/// the page's TLCP decoder and its reconnection after a server END, performs admin actions from
/// the dashboard and checks their effect on the server. Screenshots go to
/// `.build/test-artifacts/` (copies in docs/screenshots/). In CI a missing Chromium fails the
/// test; elsewhere it is skipped.
@Suite(.serialized) struct BrowserTests {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let artifacts = repoRoot.appendingPathComponent(".build/test-artifacts")

    static var chromium: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let runnable = (chromium != nil && InteropTests.pythonAvailable) || ProcessInfo.processInfo.environment["CI"] != nil

    static let admin = AdminCredentials(user: "admin", password: "browser-test-pw")

    /// The driver's JSON report line, or a failure with its output.
    static func drive(_ arguments: [String]) async throws -> [String: Any] {
        let python = try #require(InteropTests.python)
        let venvPython = try await withCheckedThrowingContinuation { c in
            Thread { c.resume(with: Result { try InteropTests.prepareVenv(python: python) }) }.start()
        }
        let driver = InteropTests.interopDir.appendingPathComponent("browser_driver.py").path
        let chromium = try #require(chromium, "chromium is not installed (apt-get install chromium)")
        let r = try await InteropTests.runOffPool(venvPython, [driver, "--chromium", chromium] + arguments, timeout: 150)
        let line = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let report = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        #expect(
            r.status == 0 && report["ok"] as? Bool == true,
            "driver exited \(r.status): \(r.stdout.suffix(4000))\n\(r.stderr.suffix(2000))")
        return report
    }

    static func startServer() async throws -> LightstreamerServer {
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.adapterSetAliases = ["DEFAULT": "DEMO"]
        options.admin = admin
        let demo = DemoAdapters.makeDemoAdapterSet(options: .init(stockUpdatesPerSecond: 2, portfolioChangesPerSecond: 1))
        let server = LightstreamerServer(options: options, adapterSets: [demo])
        try await server.start()
        return server
    }

    @Test(.enabled(if: runnable, "chromium or python3 is not available: the browser test is skipped"), .timeLimit(.minutes(5)))
    func welcomePageShowsLiveDemo() async throws {
        let server = try await Self.startServer()
        defer { Task { await server.shutdown() } }
        let port = try #require(server.port)
        let shot = Self.artifacts.appendingPathComponent("welcome.png")
        try? FileManager.default.removeItem(at: shot)
        let report = try await Self.drive([
            "--url", "http://127.0.0.1:\(port)/", "--scenario", "welcome",
            "--auth", "\(Self.admin.user):\(Self.admin.password)", "--screenshot", shot.path,
        ])
        // The page shows the thirty stocks by name, and saw prices move.
        let names = report["stocks"] as? [String] ?? []
        #expect(names.count == DemoAdapters.stockItemCount && names.allSatisfy { !$0.isEmpty }, "\(names)")
        #expect((report["changed"] as? Int ?? 0) >= 1)
        #expect((report["portfolioRows"] as? Int ?? 0) >= 1)
        // The page's TLCP decoder on the fixtures of docs/protocol/TLCP.md §1.6 and malformed lines.
        let decoder = report["decoder"] as? [String: Bool] ?? [:]
        #expect(decoder.count == 6 && decoder.values.allSatisfy { $0 }, "\(decoder)")
        // Ended by the server with END 41, the page made a new session and got updates again.
        let reconnected = report["reconnected"] as? [String: Any] ?? [:]
        let (first, second) = (reconnected["first"] as? String, reconnected["second"] as? String)
        #expect(first != nil && second != nil && first != second, "\(reconnected)")
        // The new session's snapshot replaced the chat history instead of adding to it.
        #expect(reconnected["chatCopies"] as? Int == 1, "\(reconnected)")
        // The chat message went through the server: a fresh session's snapshot of chat_room holds it.
        let chat = try #require(report["chat"] as? String)
        let history = try await Self.chatHistory(port: port)
        #expect(history.contains(chat), "\(history)")
        #expect(server.metrics.snapshot.sessionsCreated >= 1)
        let png = try Data(contentsOf: shot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000)
    }

    @Test(.enabled(if: runnable, "chromium or python3 is not available: the browser test is skipped"), .timeLimit(.minutes(5)))
    func dashboardShowsLiveFiguresAndActs() async throws {
        let server = try await Self.startServer()
        defer { Task { await server.shutdown() } }
        let port = try #require(server.port)
        // A client session for the dashboard to destroy.
        let client = LightstreamerClient(serverAddress: "http://127.0.0.1:\(port)", adapterSet: "DEMO")
        client.connectionOptions.forcedTransport = .WS_STREAMING
        let recorder = BrowserClientRecorder()
        client.addDelegate(recorder)
        client.subscribe(Subscription(subscriptionMode: .MERGE, items: ["item1", "item2"], fields: ["last_price"]))
        client.connect()
        try await Self.waitUntil { client.connectionDetails.sessionId != nil && recorder.statuses.last?.hasPrefix("CONNECTED") == true }
        let victim = try #require(client.connectionDetails.sessionId)
        // Another one, over HTTP, that stays.
        let bystander = LightstreamerClient(serverAddress: "http://127.0.0.1:\(port)", adapterSet: "DEMO")
        bystander.connectionOptions.forcedTransport = .HTTP_STREAMING
        let bystanderEvents = BrowserClientRecorder()
        bystander.addDelegate(bystanderEvents)
        bystander.subscribe(Subscription(subscriptionMode: .MERGE, items: (1...10).map { "item\($0)" }, fields: ["last_price", "time"]))
        bystander.connect()
        try await Self.waitUntil { bystanderEvents.statuses.last?.hasPrefix("CONNECTED") == true }

        let shot = Self.artifacts.appendingPathComponent("dashboard.png")
        try? FileManager.default.removeItem(at: shot)
        let report = try await Self.drive([
            "--url", "http://127.0.0.1:\(port)/dashboard", "--scenario", "dashboard",
            "--auth", "\(Self.admin.user):\(Self.admin.password)",
            "--destroy-session", victim, "--block", "--settle", "4",
            "--screenshot", shot.path,
        ])
        // The destroyed client got END 32, and the server blocks new sessions.
        try await Self.waitUntil { recorder.errors.contains(32) }
        #expect(server.admin.newSessionsBlocked)
        let figures = report["figures"] as? [String: String] ?? [:]
        #expect(Int(figures["sessions"] ?? "") ?? 0 >= 2, "\(figures)")
        #expect(Int(figures["items"] ?? "") ?? 0 >= 10, "\(figures)")
        #expect(Int(figures["sessions_http"] ?? "") ?? 0 >= 1, "\(figures)")
        // The bystander was left alone.
        #expect(bystanderEvents.statuses.last?.hasPrefix("CONNECTED") == true && !bystanderEvents.errors.contains(32))
        client.disconnect()
        bystander.disconnect()
        let png = try Data(contentsOf: shot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000)
    }

    /// The `chat_room` snapshot as a new client sees it.
    static func chatHistory(port: Int) async throws -> [String] {
        let client = LightstreamerClient(serverAddress: "http://127.0.0.1:\(port)", adapterSet: "DEMO")
        let sub = Subscription(subscriptionMode: .DISTINCT, item: "chat_room", fields: ["message"])
        sub.requestedSnapshot = .yes
        let recorder = ChatRecorder()
        sub.addDelegate(recorder)
        client.subscribe(sub)
        client.connect()
        defer { client.disconnect() }
        try? await waitUntil(seconds: 20) { recorder.endOfSnapshot }
        return recorder.messages
    }

    static func waitUntil(seconds: Double = 20, _ condition: @Sendable () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { throw BrowserTestError("condition not met within \(seconds) s") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

struct BrowserTestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

final class BrowserClientRecorder: ClientDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _statuses: [String] = []
    private var _errors: [Int] = []
    var statuses: [String] { lock.withLock { _statuses } }
    var errors: [Int] { lock.withLock { _errors } }
    func clientDidRemoveDelegate(_ client: LightstreamerClient) {}
    func clientDidAddDelegate(_ client: LightstreamerClient) {}
    func client(_ client: LightstreamerClient, didReceiveServerError errorCode: Int, withMessage errorMessage: String) {
        lock.withLock { _errors.append(errorCode) }
    }
    func client(_ client: LightstreamerClient, didChangeStatus status: LightstreamerClient.Status) {
        lock.withLock { _statuses.append(status.rawValue) }
    }
    func client(_ client: LightstreamerClient, didChangeProperty property: String) {}
}

/// The `message` values of a DISTINCT subscription, and whether its snapshot ended.
final class ChatRecorder: SubscriptionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _messages: [String] = []
    private var _ended = false
    var messages: [String] { lock.withLock { _messages } }
    var endOfSnapshot: Bool { lock.withLock { _ended } }
    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {}
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {
        lock.withLock { _ended = true }
    }
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {
        let message = itemUpdate.value(withFieldName: "message")
        lock.withLock { if let message { _messages.append(message) } }
    }
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidSubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) {}
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {}
}
