import Foundation
import TLCP
import Testing

@testable import MPNModule

/// The engine's use of the outbox: a fired trigger's notification is committed with the
/// TRIGGERED state, sent under the entry's id, then cleared; left-overs are sent at start.
@Suite("MPN outbox in the engine")
struct OutboxEngineTests {
    let register = MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a01")

    @Test("a delivered trigger notification carries its entry id and leaves the outbox empty")
    func delivered() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let dev = try await mpn.register(register, context: h.context).deviceId
        _ = try await mpn.activate(activation(device: dev, trigger: "Double.parseDouble($[2]) > 10"), context: h.context)
        h.quotes.push("item1", ["stock_name": "A", "last_price": "20"])
        await mpn.settle()
        let n = try #require(h.provider.notifications.first)
        #expect(h.provider.notifications.count == 1)
        #expect(n.idempotencyKey.flatMap { UUID(uuidString: $0) } != nil)
        #expect(try await store.outboxEntries(status: nil).isEmpty)
        await mpn.shutdown()
    }

    @Test("an entry committed but not sent before a crash is sent once at the next start")
    func resentAtStart() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let dev = try await mpn.register(register, context: h.context).deviceId
        let id = try await mpn.activate(activation(device: dev, trigger: "Double.parseDouble($[2]) > 10"), context: h.context)
        await mpn.shutdown()
        // What a crash between commit and send leaves behind.
        let fired = MPNFiredTrigger(subscriptionId: id, deviceId: dev, usesAutoBadge: false) { _ in #"{"aps":{"alert":"owed"}}"# }
        let entry = try #require(try await store.commitTriggers([fired], moduleId: "crashed", now: 5).first)
        await store.close()

        let (again, store2) = try await h.startModule()
        await again.settle()
        #expect(h.provider.alerts() == ["owed"])
        #expect(h.provider.notifications.first?.idempotencyKey == entry.id)
        #expect(try await store2.outboxEntries(status: nil).isEmpty)
        await again.shutdown()
        await store2.close()
        let (third, store3) = try await h.startModule()
        await third.settle()
        #expect(h.provider.notifications.count == 1, "sent exactly once")
        await third.shutdown()
        await store3.close()
    }

    @Test("a refusal marks the entry FAILED and counts it; it is not resent")
    func refused() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        h.provider.script.withLockedValue { $0["0a01"] = [.rejected(reason: "BadPayload")] }
        let dev = try await mpn.register(register, context: h.context).deviceId
        _ = try await mpn.activate(activation(device: dev, trigger: "Double.parseDouble($[2]) > 10"), context: h.context)
        h.quotes.push("item1", ["stock_name": "A", "last_price": "20"])
        await mpn.settle()
        #expect(await mpn.currentStatistics.failed == 1)
        #expect(try await store.outboxEntries(status: .failed).first?.failure == "BadPayload")
        await mpn.shutdown()
        let (again, _) = try await h.startModule()
        await again.settle()
        #expect(h.provider.notifications.count == 1)
        await again.shutdown()
    }

    @Test("transient failures are retried under the same id, then FAILED when retries run out")
    func retriesExhausted() async throws {
        let h = EngineHarness { $0.retry.maxAttempts = 2 }
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        h.provider.script.withLockedValue {
            $0["0a01"] = [.retry(after: nil, reason: "503"), .retry(after: .seconds(99_999_999_999), reason: "503")]
        }
        let dev = try await mpn.register(register, context: h.context).deviceId
        _ = try await mpn.activate(activation(device: dev, trigger: "Double.parseDouble($[2]) > 10"), context: h.context)
        h.quotes.push("item1", ["stock_name": "A", "last_price": "20"])
        await mpn.settle()
        #expect(try await store.outboxEntries(status: .pending).count == 1)
        h.clock.advance(by: .milliseconds(1000))
        await mpn.settle()
        let keys = h.provider.notifications.map(\.idempotencyKey)
        #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1])
        #expect(await mpn.currentStatistics.failed == 1)
        #expect(try await store.outboxEntries(status: .failed).count == 1)
        await mpn.shutdown()
    }

    @Test("a trigger whose payload passes the limit is committed FAILED, not sent")
    func payloadOverLimit() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let dev = try await mpn.register(register, context: h.context).deviceId
        _ = try await mpn.activate(
            activation(
                device: dev, format: #"{"aps":{"alert":"$[1]"}}"#,
                trigger: "Double.parseDouble($[2]) > 10"), context: h.context)
        h.quotes.push("item1", ["stock_name": String(repeating: "x", count: 5000), "last_price": "20"])
        await mpn.settle()
        #expect(h.provider.notifications.isEmpty)
        #expect(await mpn.currentStatistics.failed == 1)
        #expect(try await store.outboxEntries(status: .failed).count == 1)
        await mpn.shutdown()
    }
}
