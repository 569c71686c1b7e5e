import Foundation
import LightstreamerServer
import NIOConcurrencyHelpers
import TLCP

@testable import MPNModule

/// Records notifications and answers with scripted results per device token.
final class RecordingProvider: MPNProvider {
    let sent = NIOLockedValueBox<[MPNNotification]>([])
    let script = NIOLockedValueBox<[String: [MPNDeliveryResult]]>([:])

    func send(_ n: MPNNotification) async -> MPNDeliveryResult {
        sent.withLockedValue { $0.append(n) }
        return script.withLockedValue { s in
            guard var queue = s[n.deviceToken], !queue.isEmpty else { return .delivered }
            let r = queue.removeFirst()
            s[n.deviceToken] = queue
            return r
        }
    }

    var notifications: [MPNNotification] { sent.withLockedValue { $0 } }
    func alerts() -> [String] {
        notifications.compactMap { n in
            if case .string(let s)? = member(member(n.payload, "aps"), "alert") { return s }
            return nil
        }
    }
}

/// Collects the events of a subscription to the internal items.
final class CollectingSink: TableSink {
    let events = NIOLockedValueBox<[TableEvent]>([])
    func deliver(_ event: TableEvent) { events.withLockedValue { $0.append(event) } }
    var rows: [[String?]] {
        events.withLockedValue { $0 }.compactMap { if case .update(_, let v, _) = $0 { return v } else { return nil } }
    }
}

/// A whole MPN stack on one SQLite file: item engine with a manual clock, internal adapter,
/// recording provider.
final class EngineHarness: Sendable {
    let clock = ManualEngineClock()
    let wall = ManualWallClock()
    let quotes = ManualDataAdapter()
    let internalAdapter = MPNInternalDataAdapter()
    let provider = RecordingProvider()
    let engine: ItemEngine
    let path: String
    let configuration: MPNConfiguration
    let context = MPNRequestContext(adapterSet: "DEMO", user: nil, sessionId: "S1")

    /// `metadata`: the adapter set's Metadata Adapter (the default accepts everything).
    init(metadata: any MetadataAdapter = LiteralBasedMetadataAdapter(), configure: (inout MPNConfiguration) -> Void = { _ in }) {
        var c = MPNConfiguration()
        c.enabled = true
        configure(&c)
        configuration = c
        engine = ItemEngine(
            adapterSets: [
                AdapterSet(
                    name: "DEMO", metadata: metadata,
                    dataAdapters: [
                        "DEFAULT": quotes, MPNInternalDataAdapter.defaultName: internalAdapter,
                    ])
            ], clock: clock)
        path = FileManager.default.temporaryDirectory.appendingPathComponent("mpn-engine-\(UUID().uuidString).sqlite").path
    }

    func makeModule(store: (any MPNStore)? = nil, metrics: MPNMetrics = .global()) throws -> (MPNModule, any MPNStore) {
        let s = try store ?? SQLiteMPNStore(path: path)
        let registry = MPNProviderRegistry(
            configuration: configuration, providers: ["Apple/*": provider, "Google/*": provider],
            clock: wall)
        return (
            MPNModule(
                configuration: configuration, store: s, providers: registry, itemEngine: engine,
                internalAdapter: internalAdapter, clock: clock, wallClock: wall, metrics: metrics), s
        )
    }

    /// `makeModule()`, started.
    func startModule(metrics: MPNMetrics = .global()) async throws -> (MPNModule, any MPNStore) {
        let (module, store) = try makeModule(metrics: metrics)
        try await module.start()
        return (module, store)
    }

    func subscribeInternal(_ item: String, mode: SubscriptionMode, fields: [String]) async throws -> CollectingSink {
        let sink = CollectingSink()
        var spec = TableSpec(
            adapterSet: "DEMO", dataAdapter: MPNInternalDataAdapter.defaultName, mode: mode, items: [item],
            fields: fields, snapshot: .yes, maxFrequency: .unfiltered)
        if mode == .command {
            spec.keyPosition = 1
            spec.commandPosition = 2
        }
        _ = try await engine.subscribe(spec, sink: sink)
        return sink
    }

    func cleanUp() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

func activation(
    device: String, group: String = "item1", schema: String = "stock_name last_price",
    format: String = #"{"aps":{"alert":"${stock_name} at $[2]","badge":"AUTO"}}"#, trigger: String? = nil,
    coalescing: Bool? = nil, mode: SubscriptionMode = .merge, id: String? = nil
) -> MPNActivateParameters {
    MPNActivateParameters(
        subscriptionId: 1, mode: mode, group: group, schema: schema, deviceId: device,
        notificationFormat: format, trigger: trigger, coalescing: coalescing, mpnSubscriptionId: id)
}

/// The MPN error code `body` fails with (nil on success, -999 for another error).
func mpnCode(_ body: () async throws -> Void) async -> Int? {
    do {
        try await body()
        return nil
    } catch let e as MPNError {
        return e.code
    } catch {
        return -999
    }
}
