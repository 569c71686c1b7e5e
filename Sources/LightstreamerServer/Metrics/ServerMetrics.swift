import Atomics
import CoreMetrics
import NIOConcurrencyHelpers
import Prometheus

/// The server's figures: kept as exact numbers for the dashboard (`snapshot`, `rates`) and
/// reported as swift-metrics counters, gauges and timers made by `backend` (docs/METRICS.md),
/// which `/metrics` exports in the Prometheus text format.
public final class ServerMetrics: Sendable {
    /// The exact counts at one moment (the dashboard's source).
    public struct Snapshot: Sendable, Hashable {
        /// Sessions open now.
        public var sessionsActive = 0
        /// Sessions created since start.
        public var sessionsCreated = 0
        /// Subscriptions open now, over all sessions.
        public var subscriptionsActive = 0
        /// U lines written to clients since start.
        public var updatesSent = 0
        /// Bytes of session output written since start.
        public var bytesSent = 0
        /// Client connections open now.
        public var connectionsOpen = 0
        /// TLCP requests handled since start.
        public var requests = 0
        /// Requests answered with an error since start.
        public var requestErrors = 0
        /// Connections closed because their client did not read (unsent bytes past `maxBacklogBytes`).
        public var slowClientsClosed = 0
        /// Of `slowClientsClosed`, those closed because the slow clients together held
        /// `maxTotalBacklogBytes` (`BacklogBudget`).
        public var slowClientsOverBudget = 0
        /// Sessions closed because they held more undelivered data than `maxBacklogBytes`.
        public var sessionsClosedForBacklog = 0
        /// MERGE updates replaced by a newer one of the same item before their session's event
        /// loop got to them (`SessionInbox`), or while their session had no stream
        /// (`SessionStateMachine+Held.swift`).
        public var updatesConflated = 0
        /// Events lost before reaching their clients (the sum of `OV` counts sent or due).
        public var updatesLost = 0
    }

    private struct State {
        var counters = Snapshot()
        /// (time in ms, updates, bytes) at the previous rate computation.
        var rateBase: (at: Int64, updates: Int, bytes: Int) = (0, 0, 0)
        var lastRates: (updates: Double, bytes: Double) = (0, 0)
        /// Remote adapter counters as last reported (per endpoint), and the CPU time.
        var remoteReported: [RemoteConnectionCounters] = []
        var cpuReported: Double = 0
    }

    private let state: NIOLockedValueBox<State>
    /// `Snapshot.updatesSent` and `bytesSent`, counted apart from `state`: every write to a
    /// client adds to them, from every event loop, and a shared lock per write made the loops
    /// wait for each other.
    private let updatesSent = ManagedAtomic<Int>(0)
    private let bytesSent = ManagedAtomic<Int>(0)
    /// This node's name (`lightstreamer_node_info`), and its readiness (`lightstreamer_ready`,
    /// `lightstreamer_draining`).
    let nodeName: String?
    let health: ServerHealth?

    /// Remote adapters (`lightstreamer_remote_*`).
    let remoteEndpoints: [RemoteAdapterEndpoint]

    /// Where the metrics go (a Prometheus registry of this server's own by default).
    public let backend: MetricsBackend
    private let handles: Handles
    private let remoteHandles: [RemoteHandles]
    /// Request latency timers by request (and control operation) name.
    private let timers = NIOLockedValueBox<[String: CoreMetrics.Timer]>([:])
    static let maxTimers = 64

    /// Figures for one server: its node name and readiness for `/metrics`, its remote adapters, and
    /// where the swift-metrics instruments are made.
    public init(
        nodeName: String? = nil, health: ServerHealth? = nil, remoteEndpoints: [RemoteAdapterEndpoint] = [],
        backend: MetricsBackend = .prometheus()
    ) {
        self.nodeName = nodeName
        self.health = health
        self.remoteEndpoints = remoteEndpoints
        self.backend = backend
        handles = Handles(backend)
        remoteHandles = remoteEndpoints.map { RemoteHandles(backend, adapterSet: $0.adapterSet, role: $0.role) }
        state = NIOLockedValueBox(State(remoteReported: remoteEndpoints.map { _ in RemoteConnectionCounters() }))
    }

    /// The counts now.
    public var snapshot: Snapshot {
        var counters = state.withLockedValue { $0.counters }
        counters.updatesSent = updatesSent.load(ordering: .relaxed)
        counters.bytesSent = bytesSent.load(ordering: .relaxed)
        return counters
    }

    func update(_ body: (inout Snapshot) -> Void) {
        state.withLockedValue { s in
            let before = s.counters
            body(&s.counters)
            // Gauges set under the lock: concurrent updates cannot leave a stale value.
            handles.report(from: before, to: s.counters)
        }
    }

    /// Called once per write to a client (not per update): atomic increments, no lock.
    func sent(bytes: Int, updates: Int) {
        if bytes > 0 {
            bytesSent.wrappingIncrement(by: bytes, ordering: .relaxed)
            handles.bytesSent.increment(by: Int64(bytes))
        }
        if updates > 0 {
            updatesSent.wrappingIncrement(by: updates, ordering: .relaxed)
            handles.updatesSent.increment(by: Int64(updates))
        }
    }

    /// Records how long a TLCP request took to be handled (`lightstreamer_request_duration_seconds`):
    /// `request` is `create_session`, `bind_session`, `control`, `msg` or `heartbeat`; `operation`
    /// the control request's `LS_op`.
    func requestHandled(_ request: String, operation: String? = nil, nanoseconds: Int64) {
        let key = operation.map { request + "/" + $0 } ?? request
        let timer = timers.withLockedValue { t -> CoreMetrics.Timer in
            if let existing = t[key] { return existing }
            // Names come from the server's own enumerations; bounded anyway.
            let name = t.count < Self.maxTimers ? key : "other"
            if let existing = t[name] { return existing }
            let made = backend.timer(
                "lightstreamer_request_duration_seconds",
                [("request", t.count < Self.maxTimers ? request : "other"), ("op", operation ?? "")])
            t[name] = made
            return made
        }
        timer.recordNanoseconds(max(0, nanoseconds))
    }

    /// Updates and bytes per second since the previous call (at least one second apart;
    /// calls closer than that return the last figures).
    public func rates(nowMillis: Int64) -> (updatesPerSecond: Double, bytesPerSecond: Double) {
        let (updates, bytes) = (updatesSent.load(ordering: .relaxed), bytesSent.load(ordering: .relaxed))
        return state.withLockedValue { s -> (updatesPerSecond: Double, bytesPerSecond: Double) in
            let elapsed = nowMillis - s.rateBase.at
            if s.rateBase.at == 0 {
                s.rateBase = (nowMillis, updates, bytes)
                return (0, 0)
            }
            guard elapsed >= 1000 else { return (s.lastRates.updates, s.lastRates.bytes) }
            let seconds = Double(elapsed) / 1000
            s.lastRates = (Double(updates - s.rateBase.updates) / seconds, Double(bytes - s.rateBase.bytes) / seconds)
            s.rateBase = (nowMillis, updates, bytes)
            return (s.lastRates.updates, s.lastRates.bytes)
        }
    }

    /// Brings the figures read at scrape time up to date: rates, remote adapters, the process.
    public func refresh(nowMillis: Int64) {
        let r = rates(nowMillis: nowMillis)
        handles.updatesPerSecond.record(r.updatesPerSecond)
        handles.bytesPerSecond.record(r.bytesPerSecond)
        let remote = remoteEndpoints.map { ($0.counters, $0.isConnected) }
        let process = ProcessFigures.read()
        state.withLockedValue { s in
            for (i, (c, connected)) in remote.enumerated() where i < remoteHandles.count && i < s.remoteReported.count {
                remoteHandles[i].report(c, connected: connected, since: s.remoteReported[i])
                s.remoteReported[i] = c
            }
            if let cpu = process.cpuSeconds, cpu > s.cpuReported {
                handles.cpuSeconds.increment(by: cpu - s.cpuReported)
                s.cpuReported = cpu
            }
        }
        if let v = process.residentBytes { handles.residentBytes.record(v) }
        if let v = process.virtualBytes { handles.virtualBytes.record(v) }
        if let v = process.openFileDescriptors { handles.openFDs.record(v) }
        if let v = process.maxFileDescriptors { handles.maxFDs.record(v) }
        if let v = process.startTimeSeconds { handles.startTime.record(v) }
    }

    /// The Prometheus text exposition (format 0.0.4): the node's own lines, then the registry.
    public func prometheusText(nowMillis: Int64) -> String {
        refresh(nowMillis: nowMillis)
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: String, labels: String = "") {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name)\(labels) \(value)\n"
        }
        // Facts about the node rather than measurements: written here (as integers), not
        // through the metrics backend.
        if let nodeName {
            // Names are checked by `NodeName`: nothing to escape in the label value.
            metric(
                "lightstreamer_node_info", "gauge", "This server node; its name is the node label.", "1",
                labels: "{node=\"\(nodeName)\"}")
        }
        if let health {
            let r = health.readiness
            metric("lightstreamer_ready", "gauge", "1 when /health/ready answers 200 (new sessions welcome).", r.ready ? "1" : "0")
            metric(
                "lightstreamer_draining", "gauge", "1 while the node drains (creates refused, sessions kept).",
                health.isDraining ? "1" : "0")
        }
        if let registry = backend.registry {
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            out += Self.sortedFamilies(String(decoding: bytes, as: UTF8.self))
        }
        return out
    }

    /// The registry's metric families (each from its `# HELP`/`# TYPE` line to the next) in
    /// name order: the registry emits them in no fixed order, and scrapes are easier to read
    /// and compare when they always come the same way.
    static func sortedFamilies(_ text: String) -> String {
        var families: [(name: Substring, lines: [Substring])] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# TYPE ") || line.hasPrefix("# HELP ") {
                let name = line.dropFirst(7).prefix { $0 != " " }
                if families.last?.name != name { families.append((name, [])) }
            } else if families.isEmpty {
                families.append(("", []))
            }
            families[families.count - 1].lines.append(line)
        }
        var out = ""
        for f in families.sorted(by: { $0.name < $1.name }) {
            for l in f.lines {
                out += l
                out += "\n"
            }
        }
        return out
    }
}
