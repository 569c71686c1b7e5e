import Foundation

@testable import LightstreamerServer

/// A sink that records what the engine delivers.
final class RecordingSink: TableSink, @unchecked Sendable {
    private let lock = NSLock()
    private var _events: [TableEvent] = []
    /// When each event of `_events` arrived, on the thread that delivered it.
    private var _arrivals: [ContinuousClock.Instant] = []
    private var _started: [TableHandle] = []
    /// Order check: `started` must come before any event.
    private var _eventBeforeStart = false

    func deliver(_ event: TableEvent) {
        lock.withLock {
            if _started.isEmpty { _eventBeforeStart = true }
            _events.append(event)
            _arrivals.append(.now)
        }
    }

    func started(_ handle: TableHandle) {
        lock.withLock { _started.append(handle) }
    }

    var events: [TableEvent] { lock.withLock { _events } }
    /// When each event still recorded arrived.
    var arrivals: [ContinuousClock.Instant] { lock.withLock { _arrivals } }
    var startedCount: Int { lock.withLock { _started.count } }
    var eventBeforeStart: Bool { lock.withLock { _eventBeforeStart } }

    /// Takes and clears what was recorded.
    func take() -> [TableEvent] {
        lock.withLock {
            defer {
                _events.removeAll()
                _arrivals.removeAll()
            }
            return _events
        }
    }

    /// Just the rows of update events.
    func takeRows() -> [[String?]] {
        take().compactMap { if case .update(_, let values, _) = $0 { return values } else { return nil } }
    }
}

/// A Data Adapter driven by the test.
final class ScriptedDataAdapter: DataAdapter, @unchecked Sendable {
    private let lock = NSLock()
    private var listener: (any ItemEventListener)?
    private var _subscribes: [String] = []
    private var _unsubscribes: [String] = []
    private var _active: Set<String> = []
    let snapshotItems: Set<String>
    let refused: Set<String>
    /// Snapshot events sent from inside `subscribe` (before it returns).
    let snapshotOnSubscribe: [String: [[String: String?]]]

    init(snapshotItems: Set<String> = [], refused: Set<String> = [], snapshotOnSubscribe: [String: [[String: String?]]] = [:]) {
        self.snapshotItems = snapshotItems
        self.refused = refused
        self.snapshotOnSubscribe = snapshotOnSubscribe
    }

    func setListener(_ listener: any ItemEventListener) { lock.withLock { self.listener = listener } }
    func isSnapshotAvailable(item: String) -> Bool { snapshotItems.contains(item) }

    func subscribe(item: String) async throws {
        lock.withLock { _subscribes.append(item) }
        if refused.contains(item) { throw DataAdapterError.subscription("no such item") }
        lock.withLock { _ = _active.insert(item) }
        if let events = snapshotOnSubscribe[item] {
            for e in events { push(item, e, snapshot: true) }
            endOfSnapshot(item)
        }
    }

    func unsubscribe(item: String) async {
        lock.withLock {
            _unsubscribes.append(item)
            _ = _active.remove(item)
        }
    }

    var subscribes: [String] { lock.withLock { _subscribes } }
    var unsubscribes: [String] { lock.withLock { _unsubscribes } }
    var active: Set<String> { lock.withLock { _active } }

    func push(_ item: String, _ fields: [String: String?], snapshot: Bool = false) {
        let l = lock.withLock { listener }
        l?.update(item: item, fields: fields, isSnapshot: snapshot)
    }

    /// Several updates as one batch (`ItemEventListener.update(_:)`).
    func pushBatch(_ batch: [ItemUpdateEvent]) {
        let l = lock.withLock { listener }
        l?.update(batch)
    }

    func endOfSnapshot(_ item: String) {
        let l = lock.withLock { listener }
        l?.endOfSnapshot(item: item)
    }

    func clear(_ item: String) {
        let l = lock.withLock { listener }
        l?.clearSnapshot(item: item)
    }
}

extension ScriptedDataAdapter {
    /// Sends `updates` as one batch, or one by one.
    func deliver(_ updates: [ItemUpdateEvent], batched: Bool) {
        if batched {
            pushBatch(updates)
        } else {
            for u in updates { push(u.item, u.fields, snapshot: u.isSnapshot) }
        }
    }
}

/// An engine over one adapter set `SET` whose DEFAULT data adapter is `adapter`.
func makeEngine(
    _ adapter: ScriptedDataAdapter, metadata: any MetadataAdapter = LiteralBasedMetadataAdapter(),
    clock: ManualEngineClock = ManualEngineClock(), cap: Int = 10_000
) -> ItemEngine {
    ItemEngine(
        adapterSets: [AdapterSet(name: "SET", metadata: metadata, dataAdapters: ["DEFAULT": adapter])],
        clock: clock, maxQueuedUpdatesPerItem: cap)
}

func spec(
    _ mode: SubscriptionMode, _ items: [String], _ fields: [String], snapshot: SnapshotRequest = .no,
    frequency: RequestedFrequency = .unlimited, buffer: RequestedBufferSize? = nil,
    selector: String? = nil, dataAdapter: String = "DEFAULT"
) -> TableSpec {
    TableSpec(
        adapterSet: "SET", dataAdapter: dataAdapter, mode: mode, items: items, fields: fields, selector: selector,
        snapshot: snapshot, maxFrequency: frequency, bufferSize: buffer)
}

func update(_ item: Int, _ values: [String?], snapshot: Bool = false) -> TableEvent {
    .update(item: item, values: values, isSnapshot: snapshot)
}

extension Duration {
    static func ms(_ n: Int) -> Duration { .milliseconds(n) }
}
