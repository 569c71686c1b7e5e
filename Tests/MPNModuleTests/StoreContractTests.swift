import Foundation
import TLCP
import Testing

@testable import MPNModule

/// The same contract, run against SQLite and PostgreSQL.
@Suite("MPN store contract")
struct StoreContractTests {
    @Test("register creates once, then finds", arguments: StoreKind.available)
    func register(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let (d, created) = try await store.registerDevice(platform: .apple, applicationId: "com.x", token: "aa11", now: 100)
            #expect(created)
            #expect(d.id.count == 36 && UUID(uuidString: d.id) != nil)
            #expect(d.status == .active && d.statusTimestamp == 100 && d.badge == 0)
            let (again, created2) = try await store.registerDevice(platform: .apple, applicationId: "com.x", token: "aa11", now: 200)
            #expect(!created2)
            #expect(again.id == d.id && again.lastAccess == 200 && again.statusTimestamp == 100)
            // Another app or platform is another device.
            let other = try await store.registerDevice(platform: .google, applicationId: "com.x", token: "aa11", now: 200).device
            #expect(other.id != d.id)
            #expect(try await store.device(id: d.id)?.deviceToken == "aa11")
            #expect(try await store.device(platform: .google, applicationId: "com.x", token: "aa11")?.id == other.id)
            #expect(try await store.device(id: "nope") == nil)
            #expect(try await store.allDevices().count == 2)
        }
    }

    @Test("concurrent registrations of one device make one row", arguments: StoreKind.available)
    func concurrentRegister(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for i in 0..<16 {
                    group.addTask {
                        try await store.registerDevice(platform: .apple, applicationId: "app", token: "tok", now: Int64(i)).device.id
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count == 1)
        }
    }

    @Test("token change moves the device and resumes it", arguments: StoreKind.available)
    func tokenChange(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "old", now: 1).device
            try await store.insertSubscription(sampleSubscription(deviceId: d.id))
            _ = try await store.setDeviceStatus(id: d.id, status: .suspended, now: 5)
            let (moved, removed) = try await store.changeDeviceToken(
                platform: .apple, applicationId: "app", oldToken: "old",
                newToken: "new", now: 10)
            #expect(removed == nil)
            #expect(moved.id == d.id && moved.deviceToken == "new" && moved.status == .active && moved.statusTimestamp == 10)
            #expect(try await store.device(platform: .apple, applicationId: "app", token: "old") == nil)
            #expect(try await store.device(id: d.id)?.deviceToken == "new")
            #expect(try await store.device(id: d.id)?.status == .active)
            #expect(try await store.subscriptions(deviceId: d.id, status: nil).count == 1)
            // Unknown old token: plain registration of the new one.
            let fresh = try await store.changeDeviceToken(
                platform: .apple, applicationId: "app", oldToken: "ghost", newToken: "t3", now: 11)
            #expect(fresh.device.deviceToken == "t3" && fresh.removedDeviceId == nil)
        }
    }

    @Test("token change onto an existing device merges the subscriptions", arguments: StoreKind.available)
    func tokenMerge(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let a = try await store.registerDevice(platform: .google, applicationId: "app", token: "A", now: 1).device
            let b = try await store.registerDevice(platform: .google, applicationId: "app", token: "B", now: 1).device
            try await store.insertSubscription(sampleSubscription(deviceId: a.id))
            try await store.insertSubscription(sampleSubscription(deviceId: b.id))
            let (result, removed) = try await store.changeDeviceToken(
                platform: .google, applicationId: "app", oldToken: "A",
                newToken: "B", now: 3)
            #expect(result.id == b.id && removed == a.id)
            #expect(try await store.device(id: a.id) == nil)
            #expect(try await store.subscriptions(deviceId: b.id, status: nil).count == 2)
        }
    }

    @Test("status changes keep their timestamp; touch; delete cascades", arguments: StoreKind.available)
    func statusAndDelete(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "t", now: 1).device
            #expect(try await store.setDeviceStatus(id: d.id, status: .suspended, now: 50)?.statusTimestamp == 50)
            #expect(try await store.setDeviceStatus(id: d.id, status: .suspended, now: 60)?.statusTimestamp == 50)
            #expect(try await store.setDeviceStatus(id: "nope", status: .active, now: 60) == nil)
            #expect(try await store.touchDevice(id: d.id, now: 70))
            #expect(try await store.device(id: d.id)?.lastAccess == 70)
            #expect(try await !store.touchDevice(id: "nope", now: 70))
            let s = sampleSubscription(deviceId: d.id)
            try await store.insertSubscription(s)
            #expect(try await store.deleteDevice(id: d.id))
            #expect(try await store.subscription(id: s.id) == nil)
            #expect(try await !store.deleteDevice(id: d.id))
        }
    }

    @Test("AUTO badge counter", arguments: StoreKind.available)
    func badge(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "t", now: 1).device
            #expect(try await store.nextBadge(deviceId: d.id) == 1)
            #expect(try await store.nextBadge(deviceId: d.id) == 2)
            #expect(try await store.resetBadge(deviceId: d.id))
            #expect(try await store.device(id: d.id)?.badge == 0)
            #expect(try await store.nextBadge(deviceId: d.id) == 1)
            #expect(try await store.nextBadge(deviceId: "nope") == nil)
            #expect(try await !store.resetBadge(deviceId: "nope"))
        }
    }

    @Test("subscriptions round-trip every column", arguments: StoreKind.available)
    func subscriptionRoundTrip(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "t", now: 1).device
            let s = sampleSubscription(deviceId: d.id, now: 42)
            try await store.insertSubscription(s)
            #expect(try await store.subscription(id: s.id) == s)
            var plain = sampleSubscription(deviceId: d.id, now: 43, trigger: nil)
            plain.bufferSize = nil
            plain.maxFrequency = .unlimited
            plain.mode = .distinct
            try await store.insertSubscription(plain)
            #expect(try await store.subscription(id: plain.id) == plain)
            var changed = s
            changed.notificationFormat = #"{"aps":{"alert":"changed"}}"#
            changed.trigger = nil
            changed.maxFrequency = nil
            changed.statusTimestamp = 99
            #expect(try await store.updateSubscription(changed))
            #expect(try await store.subscription(id: s.id) == changed)
            var ghost = s
            ghost.id = "nope"
            #expect(try await !store.updateSubscription(ghost))
            #expect(try await store.subscriptions(deviceId: d.id, status: nil).map(\.id) == [s.id, plain.id])
            #expect(try await store.allSubscriptions(status: .active).count == 2)
        }
    }

    @Test("coalescing candidate matches adapter set, adapter, group, schema and trigger", arguments: StoreKind.available)
    func coalescing(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "t", now: 1).device
            let withTrigger = sampleSubscription(deviceId: d.id)
            let noTrigger = sampleSubscription(deviceId: d.id, trigger: nil)
            try await store.insertSubscription(withTrigger)
            try await store.insertSubscription(noTrigger)
            func find(_ trigger: String?, group: String = "item1 item2") async throws -> String? {
                try await store.coalescingCandidate(
                    deviceId: d.id, adapterSet: "DEMO", dataAdapter: "QUOTE_ADAPTER", group: group,
                    schema: "stock_name last_price", trigger: trigger)?.id
            }
            #expect(try await find(withTrigger.trigger) == withTrigger.id)
            #expect(try await find(nil) == noTrigger.id)
            #expect(try await find("true") == nil)
            #expect(try await find(nil, group: "item3") == nil)
        }
    }

    @Test("markTriggered is a compare-and-set", arguments: StoreKind.available)
    func triggered(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "t", now: 1).device
            let s = sampleSubscription(deviceId: d.id)
            try await store.insertSubscription(s)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { try await store.markTriggered(id: s.id, now: 77) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
            let after = try #require(try await store.subscription(id: s.id))
            #expect(after.status == .triggered && after.statusTimestamp == 77 && after.lastTriggerTime == 77)
            #expect(try await store.subscriptions(deviceId: d.id, status: .triggered).map(\.id) == [s.id])
            #expect(try await store.subscriptions(deviceId: d.id, status: .active).isEmpty)
        }
    }

    @Test("group commit of triggers and badges", arguments: StoreKind.available)
    func batchTriggeredAndBadges(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "t", now: 1).device
            let e = try await store.registerDevice(platform: .apple, applicationId: "app", token: "u", now: 1).device
            var subs: [MPNSubscriptionRecord] = []
            for _ in 0..<3 {
                var s = sampleSubscription(deviceId: d.id)
                s.id = MPNIdentifier.make()
                subs.append(s)
                try await store.insertSubscription(s)
            }
            _ = try await store.markTriggered(id: subs[0].id, now: 5)
            let won = try await store.markTriggered(ids: subs.map(\.id) + ["nope"], now: 9)
            #expect(won == [subs[1].id, subs[2].id], "the one already TRIGGERED and the unknown one lose")
            #expect(try await store.subscription(id: subs[0].id)?.statusTimestamp == 5)
            #expect(try await store.subscription(id: subs[2].id)?.status == .triggered)
            #expect(try await store.markTriggered(ids: [], now: 9).isEmpty)
            #expect(try await store.nextBadges(deviceIds: [d.id, e.id, d.id, "nope"]) == [1, 1, 2, nil])
            #expect(try await store.nextBadge(deviceId: d.id) == 3)
        }
    }

    @Test("deactivation by id, by status and all", arguments: StoreKind.available)
    func deletion(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "t", now: 1).device
            let subs = (0..<4).map { sampleSubscription(deviceId: d.id, now: Int64(10 + $0)) }
            for s in subs { try await store.insertSubscription(s) }
            _ = try await store.markTriggered(id: subs[1].id, now: 20)
            _ = try await store.markTriggered(id: subs[2].id, now: 20)
            #expect(try await store.deleteSubscription(id: subs[0].id))
            #expect(try await !store.deleteSubscription(id: subs[0].id))
            #expect(try await store.deleteSubscriptions(deviceId: d.id, status: .triggered) == [subs[1].id, subs[2].id])
            #expect(try await store.deleteSubscriptions(deviceId: d.id, status: nil) == [subs[3].id])
            #expect(try await store.deleteSubscriptions(deviceId: d.id, status: nil) == [])
        }
    }

    @Test("inactive devices are collected", arguments: StoreKind.available)
    func collect(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let suspended = try await store.registerDevice(platform: .apple, applicationId: "app", token: "s", now: 10).device
            _ = try await store.setDeviceStatus(id: suspended.id, status: .suspended, now: 10)
            try await store.insertSubscription(sampleSubscription(deviceId: suspended.id))
            let busy = try await store.registerDevice(platform: .apple, applicationId: "app", token: "b", now: 10).device
            try await store.insertSubscription(sampleSubscription(deviceId: busy.id))
            let idle = try await store.registerDevice(platform: .apple, applicationId: "app", token: "i", now: 10).device
            let triggeredOnly = try await store.registerDevice(platform: .apple, applicationId: "app", token: "t", now: 10).device
            let ts = sampleSubscription(deviceId: triggeredOnly.id)
            try await store.insertSubscription(ts)
            _ = try await store.markTriggered(id: ts.id, now: 11)
            let recent = try await store.registerDevice(platform: .apple, applicationId: "app", token: "r", now: 1000).device
            let collected = Set(try await store.collectInactiveDevices(lastAccessBefore: 500))
            #expect(collected == [suspended.id, idle.id, triggeredOnly.id])
            #expect(try await store.device(id: busy.id) != nil)
            #expect(try await store.device(id: recent.id) != nil)
            #expect(try await store.allSubscriptions(status: nil).count == 1)
        }
    }

    @Test("data survives a restart; migrations are recorded", arguments: StoreKind.available)
    func restart(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, handle in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "t", now: 1).device
            let s = sampleSubscription(deviceId: d.id)
            try await store.insertSubscription(s)
            _ = try await store.nextBadge(deviceId: d.id)
            let second = try await handle.reopen()
            #expect(try await second.device(id: d.id)?.badge == 1)
            #expect(try await second.subscription(id: s.id) == s)
            if let sqlite = second as? SQLiteMPNStore {
                #expect(try await sqlite.appliedMigrations() == MPNSchema.migrations.map(\.name))
            }
            if let pg = second as? PostgresMPNStore {
                #expect(try await pg.appliedMigrations() == (MPNSchema.migrations + MPNSchema.postgresMigrations).map(\.name))
            }
            await second.close()
        }
    }

    @Test("a request after close fails as closed", arguments: StoreKind.available)
    func requestAfterClose(_ kind: StoreKind) async throws {
        try await withStore(kind) { _, handle in
            // A second store on the same data, so that the handle's own still cleans up.
            let second = try await handle.reopen()
            let d = try await second.registerDevice(platform: .apple, applicationId: "app", token: "t1", now: 1).device
            await second.close()
            let write = await #expect(throws: MPNStoreError.self) {
                try await second.registerDevice(platform: .apple, applicationId: "app", token: "t2", now: 2)
            }
            let read = await #expect(throws: MPNStoreError.self) { try await second.device(id: d.id) }
            #expect(write?.message == "closed" && read?.message == "closed")
        }
    }
}
