import Foundation
import LightstreamerServer
import Testing

@testable import LightstreamerClient

/// More features against our server: content-length rebinds, two-level COMMAND, Stream-Sense,
/// live frequency and transport changes, async views.
@Suite(.serialized) struct EndToEndFeatureTests {
    @Test func httpStreamingRebindsWhenTheContentLengthIsUsedUp() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, _) = server.client(transport: .HTTP_STREAMING)
        client.connectionOptions.contentLength = 1500
        let sub = Subscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
        sub.requestedMaxFrequency = .unfiltered
        let updates = UpdateRecorder()
        sub.addDelegate(updates)
        client.subscribe(sub)
        client.connect()
        // Four seconds of updates, and some rebinds; under the whole suite's load this has
        // taken up to 18 s, so the wait is long (it ends as soon as the updates are in).
        try await waitUntil(seconds: 60) { updates.counts.count >= 40 }
        let counts = updates.counts
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(counts)")
        client.disconnect()
    }

    @Test func twoLevelCommandMergesSecondLevelFields() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, _) = server.client(transport: .WS_STREAMING)
        let portfolio = Subscription(subscriptionMode: .COMMAND, item: "portfolio1", fields: ["key", "command", "qty"])
        portfolio.commandSecondLevelFields = ["stock_name", "last_price"]
        let rows = UpdateRecorder()
        portfolio.addDelegate(rows)
        client.subscribe(portfolio)
        client.connect()
        // The portfolio changes (rows come and go), so look for a row that is there now.
        let rowWithPrice: @Sendable () -> String? = {
            Set(rows.values("key")).first { portfolio.commandValueWithItemPos(1, key: $0, fieldName: "last_price") != nil }
        }
        try await waitUntil { rows.values("last_price").count >= 3 && rowWithPrice() != nil }
        #expect(!rows.values("stock_name").isEmpty)
        #expect(client.subscriptions.count == 1, "second-level subscriptions are internal")
        client.disconnect()
    }

    @Test func streamSenseStartsWithWebSocketStreaming() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, events) = server.client(transport: .WS_STREAMING)
        client.connectionOptions.forcedTransport = nil
        let status = try await client.connectAndWait()
        #expect(status == .CONNECTED_WS_STREAMING)
        // SERVNAME and CLIENTIP follow CONOK.
        try await waitUntil { client.connectionDetails.serverSocketName != nil && client.connectionDetails.clientIp != nil }
        #expect(client.connectionDetails.clientIp == "127.0.0.1")
        // Switch the live session to HTTP polling and back.
        client.connectionOptions.forcedTransport = .HTTP_POLLING
        try await waitUntil { events.statuses.last == "CONNECTED:HTTP-POLLING" }
        client.connectionOptions.forcedTransport = .WS
        try await waitUntil { events.statuses.last == "CONNECTED:WS-STREAMING" }
        client.disconnect()
    }

    @Test func liveFrequencyChangeAndAsyncUpdates() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, _) = server.client(transport: .WS_STREAMING)
        let sub = Subscription(subscriptionMode: .MERGE, item: "counter", fields: ["count"])
        sub.requestedMaxFrequency = .limited(10)
        let frequencies = FrequencyRecorder()
        sub.addDelegate(frequencies)
        let stream = sub.updates()
        try await client.connectAndWait()
        try await client.subscribeAndWait(sub)
        var seen = 0
        for await update in stream {
            #expect(update.itemName == "counter")
            seen += 1
            if seen == 3 { break }
        }
        sub.requestedMaxFrequency = .limited(1)
        try await waitUntil { frequencies.values.contains(.limited(1)) }
        client.disconnect()
    }

    @Test func reverseHeartbeatsKeepTheSessionAlive() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (client, events) = server.client(transport: .HTTP_STREAMING)
        client.connectionOptions.reverseHeartbeatInterval = 200
        client.connectionOptions.keepaliveInterval = 300
        try await client.connectAndWait()
        try await Task.sleep(for: .milliseconds(1200))
        #expect(events.statuses.last == "CONNECTED:HTTP-STREAMING")
        #expect(events.serverErrors.isEmpty)
        client.disconnect()
    }
}

final class FrequencyRecorder: SubscriptionDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _values: [RealMaxFrequency?] = []
    var values: [RealMaxFrequency?] { lock.withLock { _values } }
    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {}
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {}
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidSubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) {}
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {
        lock.withLock { _values.append(frequency) }
    }
}
