import Foundation
import LightstreamerServer
import MPNModule
import Testing

@testable import LightstreamerClient

/// The client against our server (DEMO adapter set), in process, on every transport.
/// Every wait is bounded (a few seconds); nothing sleeps for a fixed time to pass.
@Suite(.serialized) struct EndToEndTests {
    static let transports: [TransportSelection] = [.WS_STREAMING, .HTTP_STREAMING, .WS_POLLING, .HTTP_POLLING]

    @Test(arguments: EndToEndTests.transports)
    func counterUpdatesArriveInOrder(transport: TransportSelection) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, events) = server.client(transport: transport)
        let sub = Subscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
        sub.requestedMaxFrequency = .unfiltered
        let updates = UpdateRecorder()
        sub.addDelegate(updates)
        client.subscribe(sub)
        client.connect()
        // The first case starts while the other suites load both cores: allow more time.
        try await waitUntil(seconds: 30) { updates.counts.count >= 15 }
        #expect(events.statuses.last == "CONNECTED:" + transport.rawValue)
        #expect(sub.isSubscribed)
        let counts = updates.counts
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(counts)")
        #expect(sub.valueWithItemName("counter", fieldName: "count") != nil)
        client.disconnect()
        try await waitUntil { events.statuses.last == "DISCONNECTED" }
    }

    @Test(arguments: [TransportSelection.WS_STREAMING, .HTTP_STREAMING, .WS_POLLING, .HTTP_POLLING])
    func socketDropRecoversWithoutLossOrDuplicates(transport: TransportSelection) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, events) = server.client(transport: transport)
        let sub = Subscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
        sub.requestedMaxFrequency = .unfiltered
        let updates = UpdateRecorder()
        sub.addDelegate(updates)
        client.subscribe(sub)
        client.connect()
        // As in the test above: in a full parallel run the creates of several suites' servers
        // were once held 7 s together (HTTP-POLLING), so the first updates get more time.
        try await waitUntil(seconds: 30) { updates.counts.count >= 10 }
        let session = client.connectionDetails.sessionId
        // A poll may be between requests when the drop is attempted: try until one breaks.
        for _ in 0..<50 where !events.statuses.contains("DISCONNECTED:TRYING-RECOVERY") {
            client.core.breakStreamConnection()
            try await Task.sleep(for: .milliseconds(30))
        }
        try await waitUntil { events.statuses.contains("DISCONNECTED:TRYING-RECOVERY") }
        let target = updates.counts.count + 20
        try await waitUntil(seconds: 15) { updates.counts.count >= target }
        let counts = updates.counts
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $1 == $0 + 1 }, "lost or duplicated: \(counts)")
        #expect(client.connectionDetails.sessionId == session, "the session was recovered, not replaced")
        // Waited for rather than read once: when the first break's status comes later than the
        // loop's 30 ms, the loop breaks again, and that break may land on the recovering
        // connection and start a second recovery after the updates counted above (seen once,
        // WS-POLLING, in a full parallel run).
        try? await waitUntil(seconds: 15) { events.statuses.last == "CONNECTED:" + transport.rawValue }
        #expect(events.statuses.last == "CONNECTED:" + transport.rawValue, "\(events.statuses.suffix(6))")
        #expect(client.connectionDetails.sessionId == session, "still the same session")
        client.disconnect()
    }

    @Test(arguments: [TransportSelection.WS_STREAMING, .HTTP_STREAMING])
    func stocksChatAndMessages(transport: TransportSelection) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, events) = server.client(transport: transport)
        let stocks = Subscription(
            subscriptionMode: .MERGE, items: ["item1", "item2"],
            fields: ["stock_name", "last_price", "time"])
        let stockUpdates = UpdateRecorder()
        stocks.addDelegate(stockUpdates)
        let chat = Subscription(subscriptionMode: .DISTINCT, item: "chat_room", fields: ["message", "timestamp", "IP", "nick"])
        chat.requestedSnapshot = .no
        let chatUpdates = UpdateRecorder()
        chat.addDelegate(chatUpdates)
        client.subscribe(stocks)
        client.subscribe(chat)
        try await client.connectAndWait()
        try await waitUntil { stockUpdates.items.contains("item1") && stockUpdates.items.contains("item2") && chat.isSubscribed }
        #expect(stockUpdates.snapshots.first == true)
        let outcome = MessageRecorder()
        client.sendMessage("CHAT|hello from swift", withSequence: "chat", delegate: outcome)
        try await waitUntil { outcome.outcomes.count == 1 && chatUpdates.values("message").contains("hello from swift") }
        #expect(outcome.outcomes == ["processed"])
        client.unsubscribe(stocks)
        try await waitUntil { !stocks.isSubscribed }
        #expect(events.serverErrors.isEmpty)
        client.disconnect()
    }

    @Test func commandPortfolioAndRaw() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, _) = server.client(transport: .WS_STREAMING)
        let portfolio = Subscription(subscriptionMode: .COMMAND, item: "portfolio1", fields: ["key", "command", "qty", "price"])
        let rows = UpdateRecorder()
        portfolio.addDelegate(rows)
        let raw = Subscription(subscriptionMode: .RAW, item: "item3", fields: ["last_price"])
        let rawUpdates = UpdateRecorder()
        raw.addDelegate(rawUpdates)
        client.subscribe(portfolio)
        client.subscribe(raw)
        client.connect()
        try await waitUntil { rows.values("key").count >= 3 && rawUpdates.items.count >= 1 }
        #expect(Set(rows.values("key")).isSuperset(of: ["item1", "item7", "item12"]))
        #expect(portfolio.keyPosition == 1 && portfolio.commandPosition == 2)
        #expect(portfolio.commandValueWithItemName("portfolio1", key: "item7", fieldName: "qty") != nil)
        client.disconnect()
    }

    @Test func refusedLoginIsAServerError() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, events) = server.client(transport: .WS_STREAMING)
        client.connectionDetails.user = "refused"
        await #expect(throws: LightstreamerError.self) { try await client.connectAndWait() }
        #expect(events.serverErrors == [-2])
        #expect(client.status == .DISCONNECTED)
    }
}

// MARK: - support

/// The server on a free port with a fast counter.
struct TestServer: Sendable {
    let port: Int
    let stopper: @Sendable () async -> Void

    static func demoSet() -> AdapterSet {
        DemoAdapters.makeDemoAdapterSet(
            options: .init(
                stockUpdatesPerSecond: 5, counterUpdatesPerSecond: 20,
                portfolioChangesPerSecond: 2))
    }

    static func start() async throws -> TestServer {
        let server = LightstreamerServer(options: ServerOptions(host: "127.0.0.1", port: 0), adapterSets: [demoSet()])
        try await server.start()
        guard let port = server.port else { throw TestError("no port") }
        return TestServer(port: port, stopper: { await server.shutdown() })
    }

    /// The server with its MPN Module: SQLite store at `sqlitePath`, `log` provider writing the
    /// notifications as JSON lines to `logFile`.
    static func startWithMPN(sqlitePath: String, logFile: String) async throws -> TestServer {
        var mpn = MPNConfiguration.demoDefault(sqlitePath: sqlitePath)
        var app = MPNConfiguration.Application(id: "*")
        app.logFile = logFile
        mpn.apple = [app]
        mpn.google = [app]
        let server = try await LightstreamerMPNServer.make(
            options: ServerOptions(host: "127.0.0.1", port: 0),
            adapterSets: [demoSet()], mpn: mpn)
        try await server.start()
        guard let port = server.port else { throw TestError("no port") }
        return TestServer(port: port, stopper: { await server.shutdown() })
    }

    func stop() async { await stopper() }

    func client(transport: TransportSelection) -> (LightstreamerClient, ClientRecorder) {
        let client = LightstreamerClient(serverAddress: "http://127.0.0.1:\(port)", adapterSet: "DEMO")
        client.connectionOptions.forcedTransport = transport
        client.connectionOptions.retryDelay = 1000
        client.connectionOptions.idleTimeout = 1000
        let events = ClientRecorder()
        client.addDelegate(events)
        return (client, events)
    }
}

struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Polls `condition` every 20 ms for up to `seconds`; the error names the line that waited.
func waitUntil(
    seconds: Double = 10, fileID: StaticString = #fileID, line: UInt = #line, _ condition: @Sendable () -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { throw TestError("condition not met within \(seconds) s (\(fileID):\(line))") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

final class ClientRecorder: ClientDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _statuses: [String] = []
    private var _errors: [Int] = []
    var statuses: [String] { lock.withLock { _statuses } }
    var serverErrors: [Int] { lock.withLock { _errors } }
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

final class UpdateRecorder: SubscriptionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var updates: [ItemUpdateSnapshot] = []
    struct Failure: Sendable {
        let code: Int
        let message: String?
    }
    private var _failures: [Failure] = []
    /// The subscription's failures (`didFailWithErrorCode`), in order.
    var failures: [Failure] { lock.withLock { _failures } }
    var counts: [Int] { lock.withLock { updates.compactMap { $0.value("count").flatMap { Int($0) } } } }
    var items: Set<String> { lock.withLock { Set(updates.compactMap(\.itemName)) } }
    var snapshots: [Bool] { lock.withLock { updates.map(\.isSnapshot) } }
    func values(_ field: String) -> [String] { lock.withLock { updates.compactMap { $0.value(field) } } }

    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {}
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {
        let snapshot = ItemUpdateSnapshot(itemUpdate)
        lock.withLock { updates.append(snapshot) }
    }
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidSubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) {
        lock.withLock { _failures.append(Failure(code: code, message: message)) }
    }
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {}
}

final class MessageRecorder: ClientMessageDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _outcomes: [String] = []
    var outcomes: [String] { lock.withLock { _outcomes } }
    private func add(_ s: String) { lock.withLock { _outcomes.append(s) } }
    func client(_ client: LightstreamerClient, didAbortMessage originalMessage: String, sentOnNetwork: Bool) { add("aborted") }
    func client(_ client: LightstreamerClient, didDenyMessage originalMessage: String, withCode code: Int, error: String) {
        add("denied \(code)")
    }
    func client(_ client: LightstreamerClient, didDiscardMessage originalMessage: String) { add("discarded") }
    func client(_ client: LightstreamerClient, didFailMessage originalMessage: String) { add("failed") }
    func client(_ client: LightstreamerClient, didProcessMessage originalMessage: String, withResponse response: String) {
        add("processed")
    }
}
