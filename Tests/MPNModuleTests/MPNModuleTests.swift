import Foundation
import LightstreamerServer
import NIOConcurrencyHelpers
import TLCP
import Testing

@testable import MPNModule

@Suite("MPN Module engine")
struct MPNModuleTests {
    let register = MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a01")

    @Test("trigger: one notification, TRIGGERED persisted and on SUB-, survives a restart")
    func triggerEndToEnd() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let reg = try await mpn.register(register, context: h.context)
        #expect(reg.adapterName == "MPN_INTERNAL_DATA_ADAPTER")
        #expect(try await mpn.register(register, context: h.context).deviceId == reg.deviceId)
        let id = try await mpn.activate(
            activation(device: reg.deviceId, trigger: "Double.parseDouble(${last_price}) > 500.0"),
            context: h.context)
        #expect(id.count == 36)
        let stored = try #require(try await store.subscription(id: id))
        #expect(stored.trigger == "Double.parseDouble($[2]) > 500.0")
        #expect(stored.notificationFormat == #"{"aps":{"alert":"$[1] at $[2]","badge":"AUTO"}}"#)
        let sub = try await h.subscribeInternal("SUB-" + id, mode: .merge, fields: MPNInternalDataAdapter.subscriptionFields)
        #expect(sub.rows.first?.first == "ACTIVE")

        h.quotes.push("item1", ["stock_name": "ACME", "last_price": "400"])
        await mpn.settle()
        #expect(h.provider.notifications.isEmpty)
        h.quotes.push("item1", ["last_price": "600.5"])
        await mpn.settle()
        h.quotes.push("item1", ["last_price": "700"])
        await mpn.settle()
        #expect(h.provider.alerts() == ["ACME at 600.5"])
        let n = try #require(h.provider.notifications.first)
        #expect(n.triggered && n.deviceToken == "0a01" && n.subscriptionId == id)
        #expect(n.payload.serialized == #"{"aps":{"alert":"ACME at 600.5","badge":1}}"#)
        #expect(try await store.subscription(id: id)?.status == .triggered)
        #expect(sub.rows.last?.first == "TRIGGERED")
        let stats = await mpn.currentStatistics
        #expect(stats.triggered == 1)

        // Restart: a new module on the same file finds device and subscription, and does not re-arm it.
        await mpn.shutdown()
        await store.close()
        let (again, store2) = try h.makeModule()
        try await again.start()
        #expect(try await store2.device(id: reg.deviceId)?.deviceToken == "0a01")
        #expect(try await store2.subscription(id: id)?.status == .triggered)
        h.quotes.push("item1", ["last_price": "800"])
        await again.settle()
        #expect(h.provider.notifications.count == 1)
        // pn_reconf re-arms it.
        let conf = MPNReconfParameters(deviceId: reg.deviceId, mpnSubscriptionId: id, trigger: "Double.parseDouble($[2]) > 900")
        #expect(try await again.reconfigure(conf, context: h.context) == id)
        h.quotes.push("item1", ["stock_name": "ACME", "last_price": "950"])
        await again.settle()
        #expect(h.provider.alerts() == ["ACME at 600.5", "ACME at 950"])
        await again.shutdown()
        await store2.close()
    }

    @Test("pacing per device with MERGE conflation; triggers exempt")
    func pacing() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let dev = try await mpn.register(register, context: h.context).deviceId
        _ = try await mpn.activate(activation(device: dev, format: #"{"aps":{"alert":"$[2]"}}"#), context: h.context)
        for price in ["1", "2", "3", "4"] {
            h.quotes.push("item1", ["stock_name": "A", "last_price": price])
            await mpn.settle()
        }
        #expect(h.provider.alerts() == ["1"], "the first goes out, the rest wait for the pacing delay")
        h.clock.advance(by: .milliseconds(999))
        await mpn.settle()
        #expect(h.provider.alerts() == ["1"])
        h.clock.advance(by: .milliseconds(1))
        await mpn.settle()
        #expect(h.provider.alerts() == ["1", "4"], "conflated to the latest value")
        // A trigger notification is not held back by pacing.
        _ = try await mpn.activate(
            activation(
                device: dev, group: "item2", format: #"{"aps":{"alert":"T$[2]"}}"#,
                trigger: "Integer.parseInt($[2]) == 7"), context: h.context)
        h.quotes.push("item2", ["stock_name": "B", "last_price": "7"])
        await mpn.settle()
        #expect(h.provider.alerts() == ["1", "4", "T7"])
        await mpn.shutdown()
        await store.close()
    }

    @Test("dead token suspends the device; token change resumes it")
    func suspension() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let dev = try await mpn.register(register, context: h.context).deviceId
        let devItem = try await h.subscribeInternal("DEV-" + dev, mode: .merge, fields: ["status", "status_timestamp"])
        _ = try await mpn.activate(activation(device: dev, format: #"{"aps":{"alert":"$[2]"}}"#), context: h.context)
        h.provider.script.withLockedValue { $0["0a01"] = [.deviceInvalid(reason: "Unregistered")] }
        h.quotes.push("item1", ["stock_name": "A", "last_price": "1"])
        await mpn.settle()
        #expect(try await store.device(id: dev)?.status == .suspended)
        #expect(devItem.rows.last?.first == "SUSPENDED")
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: dev, group: "item2"), context: h.context) } == 48)
        h.quotes.push("item1", ["last_price": "2"])
        await mpn.settle()
        #expect(h.provider.notifications.count == 1, "nothing is sent to a suspended device")
        let moved = MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a01", newDeviceToken: "0a02")
        #expect(try await mpn.register(moved, context: h.context).deviceId == dev)
        #expect(try await store.device(id: dev)?.status == .active)
        #expect(devItem.rows.last?.first == "ACTIVE")
        h.quotes.push("item1", ["last_price": "3"])
        await mpn.settle()
        #expect(h.provider.notifications.last?.deviceToken == "0a02")
        await mpn.shutdown()
        await store.close()
    }

    @Test("retries with backoff after a transient failure")
    func retries() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let dev = try await mpn.register(register, context: h.context).deviceId
        _ = try await mpn.activate(activation(device: dev, format: #"{"aps":{"alert":"$[2]"}}"#), context: h.context)
        h.provider.script.withLockedValue { $0["0a01"] = [.retry(after: nil, reason: "503"), .retry(after: .seconds(5), reason: "429")] }
        h.quotes.push("item1", ["stock_name": "A", "last_price": "1"])
        await mpn.settle()
        #expect(h.provider.notifications.count == 1)
        h.clock.advance(by: .milliseconds(1000))
        await mpn.settle()
        #expect(h.provider.notifications.count == 2, "first retry after the initial 1 s backoff")
        h.clock.advance(by: .milliseconds(4000))
        await mpn.settle()
        #expect(h.provider.notifications.count == 2, "Retry-After of 5 s is honoured")
        h.clock.advance(by: .milliseconds(1000))
        await mpn.settle()
        #expect(h.provider.notifications.count == 3)
        let stats = await mpn.currentStatistics
        #expect(stats.delivered == 1 && stats.retried == 2)
        await mpn.shutdown()
        await store.close()
    }

    @Test("operations and their error codes")
    func errors() async throws {
        let h = EngineHarness { c in
            c.apple = [MPNConfiguration.Application(id: "com.example.app")]
            c.google = []
            c.adapterSets = ["DEMO"]
        }
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        // Only the explicit providers are known in this harness; 43 comes from the configuration.
        let registry = MPNProviderRegistry(configuration: h.configuration)
        #expect(registry.knows(.apple, "com.example.app") && !registry.knows(.apple, "other.app") && !registry.knows(.google, "x"))
        let other = MPNRequestContext(adapterSet: "OTHER", sessionId: "S2")
        #expect(await mpnCode { _ = try await mpn.register(register, context: other) } == 40)
        let dev = try await mpn.register(register, context: h.context).deviceId
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: "nope"), context: h.context) } == 45)
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: dev, trigger: "$[2] >"), context: h.context) } == 44)
        #expect(
            await mpnCode { _ = try await mpn.activate(activation(device: dev, trigger: "${nope}.isEmpty()"), context: h.context) } == 47)
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: dev, format: "{"), context: h.context) } == 52)
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: dev, format: ""), context: h.context) } == 53)
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: dev, mode: .command), context: h.context) } == 24)
        #expect(
            await mpnCode {
                _ = try await mpn.activate(
                    activation(device: dev, trigger: String(repeating: " ", count: 250) + "true || true"), context: h.context)
            } == 49)
        var badAdapter = activation(device: dev)
        badAdapter.dataAdapter = "NOPE"
        #expect(await mpnCode { _ = try await mpn.activate(badAdapter, context: h.context) } == 17)
        // Coalescing: same adapter set, adapter, group, schema, trigger → same id.
        let a = try await mpn.activate(activation(device: dev, trigger: "true", coalescing: true), context: h.context)
        let b = try await mpn.activate(
            activation(device: dev, format: #"{"aps":{"alert":"v2"}}"#, trigger: "true", coalescing: true),
            context: h.context)
        #expect(a == b)
        #expect(try await store.subscription(id: a)?.notificationFormat == #"{"aps":{"alert":"v2"}}"#)
        let c = try await mpn.activate(activation(device: dev, trigger: "true"), context: h.context)
        #expect(c != a)
        // Modify by id; unknown id 46.
        #expect(try await mpn.activate(activation(device: dev, id: c), context: h.context) == c)
        #expect(await mpnCode { _ = try await mpn.activate(activation(device: dev, id: "nope"), context: h.context) } == 46)
        // pn_reconf mismatch 56, unknown 46.
        #expect(
            await mpnCode {
                _ = try await mpn.reconfigure(MPNReconfParameters(deviceId: dev, mpnSubscriptionId: c, group: "item9"), context: h.context)
            } == 56)
        #expect(
            await mpnCode {
                _ = try await mpn.reconfigure(MPNReconfParameters(deviceId: dev, mpnSubscriptionId: "nope"), context: h.context)
            } == 46)
        // reset_badge
        try await mpn.resetBadge(deviceId: dev, context: h.context)
        #expect(await mpnCode { try await mpn.resetBadge(deviceId: "nope", context: h.context) } == 45)
        // Internal COMMAND item lists the subscriptions.
        let subs = try await h.subscribeInternal("SUBS-" + dev, mode: .command, fields: ["key", "command"])
        #expect(Set(subs.rows.compactMap { $0.first ?? nil }) == ["SUB-" + a, "SUB-" + c])
        // deactivate by id (46 when unknown), by status, all.
        #expect(await mpnCode { _ = try await mpn.deactivate(deviceId: dev, target: .subscription("nope"), context: h.context) } == 46)
        #expect(try await mpn.deactivate(deviceId: dev, target: .subscription(a), context: h.context) == [a])
        #expect(subs.rows.last == ["SUB-" + a, "DELETE"])
        #expect(try await mpn.deactivate(deviceId: dev, target: .status(.triggered), context: h.context) == [])
        #expect(try await mpn.deactivate(deviceId: dev, target: .all, context: h.context) == [c])
        await mpn.shutdown()
        await store.close()
    }

    @Test("inactive devices are collected after the timeout")
    func collection() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let dev = try await mpn.register(register, context: h.context).deviceId
        h.wall.advance(millis: 10079 * 60_000)
        #expect(await mpn.collectInactiveDevices() == [])
        h.wall.advance(millis: 2 * 60_000)
        #expect(await mpn.collectInactiveDevices() == [dev])
        #expect(try await store.device(id: dev) == nil)
        await mpn.shutdown()
        await store.close()
    }

    /// A check or collection under way when the module stops (suspended at the store while
    /// `shutdown()` runs) neither touches the store nor re-arms its timer: before, such a check
    /// re-armed the check's timer for ever and collected devices after the stop.
    @Test("a module check or collection that ends after the shutdown does nothing and re-arms nothing")
    func checksAfterShutdown() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule()
        let dev = try await mpn.register(register, context: h.context).deviceId
        await mpn.shutdown()
        let timersAtShutdown = h.clock.pendingTimerCount
        h.wall.advance(millis: 10_081 * 60_000)
        await mpn.handle(.moduleCheck)
        await mpn.handle(.collect)
        #expect(h.clock.pendingTimerCount == timersAtShutdown, "a check or collection re-armed its timer")
        #expect(try await store.device(id: dev) != nil, "a stopped module collected a device")
        await store.close()
    }

    @Test("configuration JSON with defaults")
    func configuration() throws {
        let json =
            #"{"enabled":true,"adapterSets":["DEMO"],"apple":[{"id":"com.x","serviceLevel":"production","teamId":"T","keyId":"K","keyFile":"k.p8"}],"pacing":{"minSendDelayMillis":500}}"#
        let c = try MPNConfiguration.decode(json: Data(json.utf8))
        #expect(c.enabled && c.isEnabled(for: "DEMO") && !c.isEnabled(for: "X"))
        #expect(c.pacing.minSendDelayMillis == 500 && c.pacing.maxPendingPerDevice == 100)
        #expect(c.store.sqlitePath == "mpn.sqlite" && c.retry.maxAttempts == 6)
        #expect(c.application(.apple, "com.x")?.serviceLevel == .production)
        #expect(c.application(.apple, "other") == nil)
        #expect(c.application(.google, "any")?.serviceLevel == .test)
        #expect(c.retry.delayMillis(attempt: 1, hintMillis: nil) == 1000)
        #expect(c.retry.delayMillis(attempt: 3, hintMillis: nil) == 4000)
        #expect(c.retry.delayMillis(attempt: 30, hintMillis: nil) == 600_000)
        #expect(c.retry.delayMillis(attempt: 1, hintMillis: 60_000) == 60_000)
    }
}

/// A store whose writes never finish (a database that stopped answering); reads of the start-up
/// succeed empty, everything else fails.
class UnresponsiveStore: MPNStore, @unchecked Sendable {
    struct Unused: Error {}
    func registerDevice(
        platform: MPNPlatform, applicationId: String, token: String,
        now: MPNTimestamp
    ) async throws -> (device: MPNDeviceRecord, created: Bool) {
        try await Task.sleep(for: .seconds(3600))
        throw Unused()
    }
    func changeDeviceToken(
        platform: MPNPlatform, applicationId: String, oldToken: String, newToken: String,
        now: MPNTimestamp
    ) async throws -> (device: MPNDeviceRecord, removedDeviceId: String?) { throw Unused() }
    func device(id: String) async throws -> MPNDeviceRecord? { throw Unused() }
    func device(platform: MPNPlatform, applicationId: String, token: String) async throws -> MPNDeviceRecord? { throw Unused() }
    func allDevices() async throws -> [MPNDeviceRecord] { [] }
    func setDeviceStatus(id: String, status: MPNDeviceStatus, now: MPNTimestamp) async throws -> MPNDeviceRecord? { throw Unused() }
    func touchDevice(id: String, now: MPNTimestamp) async throws -> Bool { throw Unused() }
    func nextBadge(deviceId: String) async throws -> Int? { throw Unused() }
    func resetBadge(deviceId: String) async throws -> Bool { throw Unused() }
    func deleteDevice(id: String) async throws -> Bool { throw Unused() }
    func collectInactiveDevices(lastAccessBefore cutoff: MPNTimestamp) async throws -> [String] { [] }
    func insertSubscription(_ subscription: MPNSubscriptionRecord) async throws { throw Unused() }
    func updateSubscription(_ subscription: MPNSubscriptionRecord) async throws -> Bool { throw Unused() }
    func subscription(id: String) async throws -> MPNSubscriptionRecord? { throw Unused() }
    func subscriptions(deviceId: String, status: MPNSubscriptionStatus?) async throws -> [MPNSubscriptionRecord] { throw Unused() }
    func allSubscriptions(status: MPNSubscriptionStatus?) async throws -> [MPNSubscriptionRecord] { [] }
    func coalescingCandidate(
        deviceId: String, adapterSet: String, dataAdapter: String, group: String,
        schema: String, trigger: String?
    ) async throws -> MPNSubscriptionRecord? { throw Unused() }
    func markTriggered(id: String, now: MPNTimestamp) async throws -> Bool { throw Unused() }
    func commitTriggers(_ fired: [MPNFiredTrigger], moduleId: String, now: MPNTimestamp) async throws -> [MPNOutboxEntry] {
        throw Unused()
    }
    func claimOutbox(moduleId: String, silentBefore: MPNTimestamp) async throws -> [MPNOutboxEntry] { [] }
    func deleteOutboxEntry(id: String) async throws -> Bool { throw Unused() }
    func failOutboxEntry(id: String, reason: String) async throws -> Bool { throw Unused() }
    func outboxEntries(status: MPNOutboxStatus?) async throws -> [MPNOutboxEntry] { throw Unused() }
    func deleteSubscription(id: String) async throws -> Bool { throw Unused() }
    func deleteSubscriptions(deviceId: String, status: MPNSubscriptionStatus?) async throws -> [String] { throw Unused() }
    var isShared: Bool { false }
    func heartbeat(moduleId: String, now: MPNTimestamp) async throws {}
    func claimDevice(id: String, moduleId: String) async throws { throw Unused() }
    func claimOrphanedDevices(moduleId: String, silentBefore: MPNTimestamp) async throws -> Set<String> { [] }
    func removeModule(moduleId: String) async throws {}
    func close() async {}
}

/// `UnresponsiveStore` whose cluster calls are recorded, in the order they finish, and whose
/// heartbeat waits once `holdHeartbeat` is set, until it is cleared.
final class ClusterCallsStore: UnresponsiveStore, @unchecked Sendable {
    let calls = NIOLockedValueBox<[String]>([])
    let holdHeartbeat = NIOLockedValueBox(false)
    let heartbeatHeld = NIOLockedValueBox(false)

    override func heartbeat(moduleId: String, now: MPNTimestamp) async throws {
        while holdHeartbeat.withLockedValue({ $0 }) {
            heartbeatHeld.withLockedValue { $0 = true }
            try await Task.sleep(for: .milliseconds(5))
        }
        calls.withLockedValue { $0.append("heartbeat") }
    }
    override func claimOrphanedDevices(moduleId: String, silentBefore: MPNTimestamp) async throws -> Set<String> {
        calls.withLockedValue { $0.append("claim") }
        return []
    }
    override func removeModule(moduleId: String) async throws {
        calls.withLockedValue { $0.append("remove") }
    }
}

@Suite("MPN module checks around a shutdown")
struct MPNCheckAtShutdownTests {
    /// A check whose heartbeat lands after the stop removed the instance removes it again and
    /// claims nothing: the others see the instance gone, not alive until it times out.
    @Test("a check suspended at its heartbeat during shutdown() leaves the instance removed and claims nothing")
    func heartbeatAfterTheStop() async throws {
        let h = EngineHarness()
        let store = ClusterCallsStore()
        let (mpn, _) = try h.makeModule(store: store)
        try await mpn.start()
        store.calls.withLockedValue { $0 = [] }
        store.holdHeartbeat.withLockedValue { $0 = true }
        let check = Task { await mpn.checkModules() }
        for _ in 0..<1_000 where !store.heartbeatHeld.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(store.heartbeatHeld.withLockedValue { $0 })
        await mpn.shutdown()
        store.holdHeartbeat.withLockedValue { $0 = false }
        await check.value
        #expect(store.calls.withLockedValue { $0 } == ["remove", "heartbeat", "remove"])
    }
}

@Suite("MPN requests from sessions")
struct MPNSessionRequestTests {
    @Test("a store that does not answer: 41 after requestTimeoutMillis, not a hung session")
    func timeoutGives41() async throws {
        let h = EngineHarness { $0.requestTimeoutMillis = 200 }
        let (mpn, _) = try h.makeModule(store: UnresponsiveStore())
        try await mpn.start()
        let op = ControlOperation.mpnRegister(MPNRegisterParameters(platform: .apple, applicationId: "app", deviceToken: "0a"))
        let result = await mpn.handle(op, context: MPNSessionContext(adapterSet: "DEMO", user: nil, sessionId: "S1"))
        guard case .failure(let refusal) = result else {
            Issue.record("expected a refusal, got \(result)")
            return
        }
        #expect(refusal.code == 41)
        await mpn.shutdown()
    }

    @Test("outcomes map to the session's MPN notifications; refusals keep their code")
    func outcomes() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, _) = try await h.startModule()
        let ctx = MPNSessionContext(adapterSet: "DEMO", user: nil, sessionId: "S1")
        let reg = await mpn.handle(
            .mpnRegister(MPNRegisterParameters(platform: .apple, applicationId: "app", deviceToken: "0a")),
            context: ctx)
        guard case .success(.registered(let device, let adapter)) = reg else {
            Issue.record("\(reg)")
            return
        }
        #expect(adapter == MPNInternalDataAdapter.defaultName)
        let act = await mpn.handle(.mpnActivate(activation(device: device)), context: ctx)
        guard case .success(.activated(1, let id)) = act else {
            Issue.record("\(act)")
            return
        }
        let bad = await mpn.handle(.mpnReconf(MPNReconfParameters(deviceId: device, mpnSubscriptionId: id, mode: .distinct)), context: ctx)
        #expect(bad == .failure(SessionRefusal(code: 56, message: MPNError.reconfMismatch.message)))
        #expect(await mpn.handle(.mpnResetBadge(deviceId: device), context: ctx) == .success(.badgeReset(deviceId: device)))
        #expect(
            await mpn.handle(.mpnDeactivate(deviceId: device, target: .all), context: ctx)
                == .success(.deactivated(mpnSubscriptionIds: [id])))
        await mpn.shutdown()
    }
}
