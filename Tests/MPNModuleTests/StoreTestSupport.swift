import Foundation
import Testing

@testable import MPNModule

/// Opens a fresh store of one kind for one test: a temp SQLite file, or a throw-away schema in
/// the PostgreSQL database of `LS_TEST_POSTGRES_URL`.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static var postgresURL: String? {
        let v = ProcessInfo.processInfo.environment["LS_TEST_POSTGRES_URL"]
        return v?.isEmpty == false ? v : nil
    }

    static let postgresSkipMessage = "LS_TEST_POSTGRES_URL is not set: PostgreSQL store tests skipped (scripts/test.sh sets it)"

    /// The kinds that can run here; prints the skip once when PostgreSQL is unavailable.
    static var available: [StoreKind] {
        if postgresURL == nil {
            print("⚠️  \(postgresSkipMessage)")
            return [.sqlite]
        }
        return allCases
    }
}

/// A store plus the means to reopen it (restart) and to clean up.
final class StoreHandle: Sendable {
    let kind: StoreKind
    let location: String
    let store: any MPNStore

    private init(kind: StoreKind, location: String, store: any MPNStore) {
        self.kind = kind
        self.location = location
        self.store = store
    }

    static func make(_ kind: StoreKind) async throws -> StoreHandle {
        switch kind {
        case .sqlite:
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mpn-store-\(UUID().uuidString)")
            let path = dir.appendingPathComponent("mpn.sqlite").path
            return StoreHandle(kind: kind, location: path, store: try SQLiteMPNStore(path: path))
        case .postgres:
            let url = try #require(StoreKind.postgresURL)
            let schema = "mpn_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            return StoreHandle(
                kind: kind, location: String(schema), store: try await PostgresMPNStore.open(url: url, schema: String(schema)))
        }
    }

    /// A second store on the same data (as after a restart).
    func reopen() async throws -> any MPNStore {
        switch kind {
        case .sqlite: return try SQLiteMPNStore(path: location)
        case .postgres: return try await PostgresMPNStore.open(url: try #require(StoreKind.postgresURL), schema: location)
        }
    }

    func destroy() async {
        switch kind {
        case .sqlite:
            await store.close()
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: location).deletingLastPathComponent().path)
        case .postgres:
            try? await (store as? PostgresMPNStore)?.dropSchema()
            await store.close()
        }
    }
}

func withStore(_ kind: StoreKind, _ body: (any MPNStore, StoreHandle) async throws -> Void) async throws {
    let handle = try await StoreHandle.make(kind)
    do {
        try await body(handle.store, handle)
    } catch {
        await handle.destroy()
        throw error
    }
    await handle.destroy()
}

func sampleSubscription(
    id: String = UUID().uuidString.lowercased(), deviceId: String, now: MPNTimestamp = 1000,
    trigger: String? = "Double.parseDouble($[2]) > 500.0", group: String = "item1 item2"
) -> MPNSubscriptionRecord {
    MPNSubscriptionRecord(
        id: id, deviceId: deviceId, adapterSet: "DEMO", dataAdapter: "QUOTE_ADAPTER", group: group,
        items: group.split(separator: " ").map(String.init), schema: "stock_name last_price",
        fields: ["stock_name", "last_price"], mode: .merge,
        notificationFormat: #"{"aps":{"alert":"$[1] is $[2]","badge":"AUTO"}}"#, trigger: trigger,
        bufferSize: .size(1), maxFrequency: .limited(0.5), statusTimestamp: now, createdAt: now)
}
