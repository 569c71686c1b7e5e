import Foundation
import TLCP
import Testing

@testable import MPNModule

/// The outbox part of the store contract, against SQLite and PostgreSQL.
@Suite("MPN store outbox contract")
struct StoreOutboxContractTests {
    static func fired(_ s: MPNSubscriptionRecord, auto: Bool = true, text: String = "hi") -> MPNFiredTrigger {
        MPNFiredTrigger(subscriptionId: s.id, deviceId: s.deviceId, usesAutoBadge: auto) { badge in
            #"{"aps":{"alert":"\#(text)","badge":\#(badge ?? -1)}}"#
        }
    }

    @Test("commitTriggers: TRIGGERED, badge and outbox entry in one compare-and-set", arguments: StoreKind.available)
    func commit(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "0a", now: 1).device
            let a = sampleSubscription(deviceId: d.id)
            let b = sampleSubscription(deviceId: d.id)
            let c = sampleSubscription(deviceId: d.id)
            for s in [a, b, c] { try await store.insertSubscription(s) }
            _ = try await store.markTriggered(id: b.id, now: 5)
            let entries = try await store.commitTriggers(
                [Self.fired(a), Self.fired(b), Self.fired(c, auto: false)],
                moduleId: "m1", now: 9)
            #expect(entries.map(\.subscriptionId) == [a.id, c.id], "the one already TRIGGERED loses")
            #expect(entries.allSatisfy { UUID(uuidString: $0.id) != nil && $0.status == .pending && $0.createdAt == 9 })
            #expect(entries.first?.payload == #"{"aps":{"alert":"hi","badge":1}}"#, "badge allocated in the commit")
            #expect(entries.last?.payload == #"{"aps":{"alert":"hi","badge":-1}}"#, "no badge without AUTO")
            #expect(try await store.device(id: d.id)?.badge == 1)
            #expect(try await store.subscription(id: a.id)?.status == .triggered)
            #expect(try await store.subscription(id: a.id)?.lastTriggerTime == 9)
            #expect(Set(try await store.outboxEntries(status: .pending)) == Set(entries))
            #expect(try await store.commitTriggers([], moduleId: "m1", now: 9).isEmpty)
        }
    }

    @Test("concurrent commits of one trigger write one entry", arguments: StoreKind.available)
    func concurrent(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "0a", now: 1).device
            let s = sampleSubscription(deviceId: d.id)
            try await store.insertSubscription(s)
            let written = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<8 {
                    group.addTask { try await store.commitTriggers([Self.fired(s)], moduleId: "m\(i)", now: 3).count }
                }
                return try await group.reduce(0, +)
            }
            #expect(written == 1)
            #expect(try await store.outboxEntries(status: nil).count == 1)
            #expect(try await store.device(id: d.id)?.badge == 1)
        }
    }

    @Test("a payload refused while rendering is written FAILED", arguments: StoreKind.available)
    func refused(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "0a", now: 1).device
            let s = sampleSubscription(deviceId: d.id)
            try await store.insertSubscription(s)
            let f = MPNFiredTrigger(subscriptionId: s.id, deviceId: d.id, usesAutoBadge: false, refusal: "too big") { _ in nil }
            let entries = try await store.commitTriggers([f], moduleId: "m1", now: 3)
            #expect(entries.count == 1 && entries.first?.status == .failed && entries.first?.failure == "too big")
            #expect(try await store.subscription(id: s.id)?.status == .triggered)
            #expect(try await store.claimOutbox(moduleId: "m1", silentBefore: 0).isEmpty)
        }
    }

    @Test("sent entries are deleted, failed ones marked and never claimed again", arguments: StoreKind.available)
    func deleteAndFail(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            try await store.heartbeat(moduleId: "m1", now: 100)
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "0a", now: 1).device
            try await store.claimDevice(id: d.id, moduleId: "m1")
            let a = sampleSubscription(deviceId: d.id)
            let b = sampleSubscription(deviceId: d.id)
            for s in [a, b] { try await store.insertSubscription(s) }
            let entries = try await store.commitTriggers([Self.fired(a), Self.fired(b)], moduleId: "m1", now: 3)
            #expect(Set(try await store.claimOutbox(moduleId: "m1", silentBefore: 50).map(\.id)) == Set(entries.map(\.id)))
            #expect(try await store.deleteOutboxEntry(id: entries[0].id))
            #expect(try await !store.deleteOutboxEntry(id: entries[0].id))
            #expect(try await store.failOutboxEntry(id: entries[1].id, reason: "BadPayload"))
            #expect(try await !store.failOutboxEntry(id: "nope", reason: "x"))
            #expect(try await store.claimOutbox(moduleId: "m1", silentBefore: 50).isEmpty)
            let failed = try await store.outboxEntries(status: .failed)
            #expect(failed.map(\.id) == [entries[1].id] && failed.first?.failure == "BadPayload")
            #expect(try await store.outboxEntries(status: .pending).isEmpty)
        }
    }

    @Test(
        "claims: one instance per entry; a dead claimant's entries are taken over with its devices",
        arguments: StoreKind.available)
    func claims(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            try await store.heartbeat(moduleId: "A", now: 100)
            try await store.heartbeat(moduleId: "B", now: 100)
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "0a", now: 1).device
            try await store.claimDevice(id: d.id, moduleId: "A")
            let s = sampleSubscription(deviceId: d.id)
            try await store.insertSubscription(s)
            let entry = try #require(try await store.commitTriggers([Self.fired(s)], moduleId: "A", now: 3).first)
            // B does not run the device: nothing for it.
            #expect(try await store.claimOutbox(moduleId: "B", silentBefore: 50).isEmpty)
            // The device moves to B while A (alive) still has the entry under way: still A's.
            try await store.claimDevice(id: d.id, moduleId: "B")
            #expect(try await store.claimOutbox(moduleId: "B", silentBefore: 50).isEmpty)
            #expect(try await store.outboxEntries(status: .pending).map(\.id) == [entry.id])
            // A falls silent (dead): B takes the entry, and only B.
            try await store.heartbeat(moduleId: "B", now: 200)
            let claimed = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await store.claimOutbox(moduleId: "B", silentBefore: 150).count } }
                return try await group.reduce(0, +)
            }
            #expect(claimed >= 1)
            #expect(try await store.claimOutbox(moduleId: "A", silentBefore: 150).isEmpty, "A is not the device's instance")
            #expect(try await store.claimOutbox(moduleId: "B", silentBefore: 150).map(\.id) == [entry.id])
        }
    }

    @Test("the outbox follows its device: token merge moves it, deletion removes it", arguments: StoreKind.available)
    func followsDevice(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let old = try await store.registerDevice(platform: .apple, applicationId: "app", token: "0a", now: 1).device
            let new = try await store.registerDevice(platform: .apple, applicationId: "app", token: "0b", now: 1).device
            let s = sampleSubscription(deviceId: old.id)
            try await store.insertSubscription(s)
            _ = try await store.commitTriggers([Self.fired(s)], moduleId: "m1", now: 3)
            let (merged, removed) = try await store.changeDeviceToken(
                platform: .apple, applicationId: "app", oldToken: "0a",
                newToken: "0b", now: 4)
            #expect(removed == old.id && merged.id == new.id)
            #expect(try await store.outboxEntries(status: nil).map(\.deviceId) == [new.id])
            #expect(try await store.deleteDevice(id: new.id))
            #expect(try await store.outboxEntries(status: nil).isEmpty)
        }
    }

    @Test("the v3 outbox migration is applied", arguments: StoreKind.available)
    func migration(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let names: [String]
            if let s = store as? SQLiteMPNStore {
                names = try await s.appliedMigrations()
            } else {
                names = try await (try #require(store as? PostgresMPNStore)).appliedMigrations()
            }
            let expected = MPNSchema.migrations + (kind == .postgres ? MPNSchema.postgresMigrations : [])
            #expect(names == expected.map(\.name))
            #expect(names.contains("v3-outbox"))
        }
    }
}

@Suite("MPN store: subscriptions per device")
struct StoreSubscriptionLimitTests {
    @Test("concurrent inserts for one device never pass the limit", arguments: StoreKind.available)
    func atomicLimit(_ kind: StoreKind) async throws {
        try await withStore(kind) { store, _ in
            let d = try await store.registerDevice(platform: .apple, applicationId: "app", token: "0a", now: 1).device
            let inserted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await store.insertSubscription(sampleSubscription(deviceId: d.id), maxPerDevice: 5) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(inserted == 5)
            #expect(try await store.subscriptions(deviceId: d.id, status: nil).count == 5)
        }
    }
}
