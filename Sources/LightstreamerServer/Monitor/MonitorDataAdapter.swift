import NIOConcurrencyHelpers

/// Where the `MONITOR` adapter set reads its figures (attached by `LightstreamerServer`).
struct MonitorSource: Sendable {
    let inputs: @Sendable () async -> MonitorInputs
}

/// The data adapter of the `MONITOR` adapter set (see `MonitorAdapters`): while any of its
/// items is subscribed, samples the server once a second and sends what changed. Snapshots:
/// the current values, sent at subscription.
final class MonitorDataAdapter: DataAdapter {
    static let serverItem = "server"
    static let sessionsItem = "sessions"
    static let mpnAppsItem = "mpn_apps"
    static let items: Set<String> = [serverItem, sessionsItem, mpnAppsItem]

    private struct State {
        var source: MonitorSource?
        var sampler = MonitorSampler(startedAt: monotonicMillis())
        var subscribed: Set<String> = []
        var sessionRows: [String: [String: String?]] = [:]
        var mpnRows: [String: [String: String?]] = [:]
        var loop: Task<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())
    private let listener = NIOLockedValueBox<(any ItemEventListener)?>(nil)
    let periodMillis: Int

    init(periodMillis: Int = 1000) {
        self.periodMillis = max(100, periodMillis)
    }

    func attach(_ source: MonitorSource) {
        state.withLockedValue { $0.source = source }
    }

    func setListener(_ listener: any ItemEventListener) {
        self.listener.withLockedValue { $0 = listener }
    }

    func isSnapshotAvailable(item: String) -> Bool { Self.items.contains(item) }

    func subscribe(item: String) async throws {
        guard Self.items.contains(item) else { throw DataAdapterError.subscription("No item \(item) in MONITOR") }
        guard let source = state.withLockedValue({ $0.source }) else {
            throw DataAdapterError.subscription("The monitor is not attached to a server")
        }
        let inputs = await source.inputs()
        let (events, startLoop) = state.withLockedValue { s -> ([[String: String?]], Bool) in
            s.subscribed.insert(item)
            let start = s.loop == nil
            switch item {
            case Self.serverItem:
                return ([s.sampler.serverRow(inputs)], start)
            case Self.sessionsItem:
                s.sessionRows = MonitorSampler.sessionRows(inputs)
                return (MonitorSampler.commandEvents(old: [:], new: s.sessionRows), start)
            default:
                s.mpnRows = MonitorSampler.mpnAppRows(inputs)
                return (MonitorSampler.commandEvents(old: [:], new: s.mpnRows), start)
            }
        }
        let l = listener.withLockedValue { $0 }
        for e in events { l?.update(item: item, fields: e, isSnapshot: true) }
        l?.endOfSnapshot(item: item)
        if startLoop { startSampling(source) }
    }

    func unsubscribe(item: String) async {
        let loop = state.withLockedValue { s -> Task<Void, Never>? in
            s.subscribed.remove(item)
            guard s.subscribed.isEmpty else { return nil }
            defer { s.loop = nil }
            return s.loop
        }
        loop?.cancel()
    }

    private func startSampling(_ source: MonitorSource) {
        let period = UInt64(periodMillis) * 1_000_000
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: period)
                guard let self, !Task.isCancelled else { return }
                await self.tick(source.inputs())
            }
        }
        state.withLockedValue { s in
            if s.loop == nil && !s.subscribed.isEmpty { s.loop = task } else { task.cancel() }
        }
    }

    /// One sample: the `server` row, and the COMMAND changes of the other items.
    func tick(_ inputs: MonitorInputs) async {
        let out = state.withLockedValue { s -> [(String, [String: String?])] in
            var out: [(String, [String: String?])] = []
            if s.subscribed.contains(Self.serverItem) { out.append((Self.serverItem, s.sampler.serverRow(inputs))) }
            if s.subscribed.contains(Self.sessionsItem) {
                let rows = MonitorSampler.sessionRows(inputs)
                out += MonitorSampler.commandEvents(old: s.sessionRows, new: rows).map { (Self.sessionsItem, $0) }
                s.sessionRows = rows
            }
            if s.subscribed.contains(Self.mpnAppsItem) {
                let rows = MonitorSampler.mpnAppRows(inputs)
                out += MonitorSampler.commandEvents(old: s.mpnRows, new: rows).map { (Self.mpnAppsItem, $0) }
                s.mpnRows = rows
            }
            return out
        }
        let l = listener.withLockedValue { $0 }
        for (item, fields) in out { l?.update(item: item, fields: fields, isSnapshot: false) }
    }
}
