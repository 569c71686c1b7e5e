import Foundation
import LightstreamerServer
import TLCP
import Testing

@testable import MPNModule

/// Two servers on one PostgreSQL database: each device is run by exactly one MPN Module
/// instance (the one its app registered through), taken over when that one dies or stops.
@Suite("MPN cluster on PostgreSQL")
struct MPNClusterTests {
    static let register = MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a01")

    @Test(
        "one instance runs each device; re-registration moves it; a dead or stopped instance's devices are taken over",
        .enabled(if: StoreKind.postgresURL != nil, "LS_TEST_POSTGRES_URL is not set (scripts/test.sh sets it)"))
    func ownership() async throws {
        let handle = try await StoreHandle.make(.postgres)
        let a = EngineHarness()
        let b = EngineHarness()
        defer {
            a.cleanUp()
            b.cleanUp()
        }
        let storeA = handle.store
        let storeB = try await handle.reopen()
        let (moduleA, _) = try a.makeModule(store: storeA)
        let (moduleB, _) = try b.makeModule(store: storeB)
        try await moduleA.start()
        try await moduleB.start()

        // Registered and activated through A: A runs it, B does not.
        let device = try await moduleA.register(Self.register, context: a.context).deviceId
        let id = try await moduleA.activate(
            activation(device: device, trigger: "Double.parseDouble(${last_price}) > 100"),
            context: a.context)
        b.quotes.push("item1", ["stock_name": "X", "last_price": "150"])
        await moduleB.settle()
        #expect(b.provider.notifications.isEmpty, "B does not run A's device")
        #expect(b.quotes.subscribed.withLockedValue { $0 }.isEmpty)
        a.quotes.push("item1", ["stock_name": "X", "last_price": "150"])
        await moduleA.settle()
        #expect(a.provider.alerts() == ["X at 150"])

        // Re-armed through A, A runs it again (its item is subscribed).
        let rearmA = MPNReconfParameters(deviceId: device, mpnSubscriptionId: id, trigger: "Double.parseDouble(${last_price}) > 200")
        #expect(try await moduleA.reconfigure(rearmA, context: a.context) == id)
        #expect(a.quotes.subscribed.withLockedValue { $0 } == ["item1"])

        // The app now registers through B: B takes the device over, A lets go at its next check.
        _ = try await moduleB.register(Self.register, context: b.context)
        await moduleA.checkModules()
        let rearm = MPNReconfParameters(deviceId: device, mpnSubscriptionId: id, trigger: "Double.parseDouble(${last_price}) > 200")
        #expect(try await moduleB.reconfigure(rearm, context: b.context) == id)
        a.quotes.push("item1", ["stock_name": "X", "last_price": "250"])
        await moduleA.settle()
        #expect(a.provider.notifications.count == 1, "A no longer runs it")
        #expect(a.quotes.subscribed.withLockedValue { $0 }.isEmpty)
        b.quotes.push("item1", ["stock_name": "X", "last_price": "250"])
        await moduleB.settle()
        #expect(b.provider.alerts() == ["X at 250"])

        // B goes silent (no heartbeat past moduleTimeoutMillis): A takes the device over.
        let rearm2 = MPNReconfParameters(deviceId: device, mpnSubscriptionId: id, trigger: "Double.parseDouble(${last_price}) > 300")
        _ = try await moduleB.reconfigure(rearm2, context: b.context)
        a.wall.advance(millis: Int64(a.configuration.moduleTimeoutMillis) + 1_000)
        await moduleA.checkModules()
        a.quotes.push("item1", ["stock_name": "X", "last_price": "350"])
        await moduleA.settle()
        #expect(a.provider.alerts() == ["X at 150", "X at 350"])

        // A stops cleanly: B (alive again) takes over at once, without waiting for the timeout.
        b.wall.set(millis: a.wall.nowMillis())
        await moduleB.checkModules()
        #expect(
            try await moduleA.reconfigure(
                MPNReconfParameters(
                    deviceId: device, mpnSubscriptionId: id,
                    trigger: "Double.parseDouble(${last_price}) > 400"),
                context: a.context) == id)
        await moduleA.shutdown()
        // A check of A's that was under way at its stop records nothing: A stays gone.
        await moduleA.checkModules()
        await moduleB.checkModules()
        b.quotes.push("item1", ["stock_name": "X", "last_price": "450"])
        await moduleB.settle()
        #expect(b.provider.alerts() == ["X at 250", "X at 450"])

        await moduleB.shutdown()
        await storeB.close()
        await handle.destroy()
    }

    @Test(
        "an outbox entry left by a dead instance is sent once, by the instance that takes its device over",
        .enabled(if: StoreKind.postgresURL != nil, "LS_TEST_POSTGRES_URL is not set (scripts/test.sh sets it)"))
    func outboxTakeover() async throws {
        let handle = try await StoreHandle.make(.postgres)
        let a = EngineHarness()
        let b = EngineHarness()
        defer {
            a.cleanUp()
            b.cleanUp()
        }
        let storeA = handle.store
        let storeB = try await handle.reopen()
        let (moduleA, _) = try a.makeModule(store: storeA)
        let (moduleB, _) = try b.makeModule(store: storeB)
        try await moduleA.start()
        try await moduleB.start()
        let device = try await moduleA.register(Self.register, context: a.context).deviceId
        let id = try await moduleA.activate(
            activation(device: device, trigger: "Double.parseDouble(${last_price}) > 100"),
            context: a.context)
        // A commits the trigger and its notification, then dies before sending (what a crash leaves).
        let fired = MPNFiredTrigger(subscriptionId: id, deviceId: device, usesAutoBadge: false) { _ in #"{"aps":{"alert":"owed"}}"# }
        let entry = try #require(try await storeA.commitTriggers([fired], moduleId: moduleA.moduleId, now: a.wall.nowMillis()).first)
        // While A is alive, B leaves it alone.
        await moduleB.checkModules()
        await moduleB.settle()
        #expect(b.provider.notifications.isEmpty)
        // A silent past the timeout: B takes the device and the entry over and sends it once.
        b.wall.advance(millis: Int64(b.configuration.moduleTimeoutMillis) + 1_000)
        await moduleB.checkModules()
        await moduleB.settle()
        await moduleB.checkModules()
        await moduleB.settle()
        #expect(b.provider.alerts() == ["owed"])
        #expect(b.provider.notifications.first?.idempotencyKey == entry.id)
        #expect(try await storeB.outboxEntries(status: nil).isEmpty)
        // A comes back: the device is B's now, nothing is sent twice.
        a.wall.set(millis: b.wall.nowMillis())
        await moduleA.checkModules()
        await moduleA.settle()
        #expect(a.provider.notifications.isEmpty)
        await moduleA.shutdown()
        await moduleB.shutdown()
        await storeB.close()
        await handle.destroy()
    }
}
