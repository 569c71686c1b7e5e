import NIOConcurrencyHelpers

/// Counters the server exposes on `/metrics` (Prometheus text format).
public final class ServerMetrics: Sendable {
    public struct Snapshot: Sendable, Hashable {
        public var sessionsActive = 0
        public var sessionsCreated = 0
        public var subscriptionsActive = 0
        public var updatesSent = 0
        public var bytesSent = 0
        public var connectionsOpen = 0
        public var requests = 0
        public var requestErrors = 0
        /// Connections closed because their client did not read (unsent bytes past `maxBacklogBytes`).
        public var slowClientsClosed = 0
        /// Sessions closed because they held more undelivered data than `maxBacklogBytes`.
        public var sessionsClosedForBacklog = 0
        /// MERGE updates replaced by a newer one of the same item before their session's event
        /// loop got to them (`SessionInbox`).
        public var updatesConflated = 0
        /// Events lost before reaching their clients (the sum of `OV` counts sent or due).
        public var updatesLost = 0
    }

    private struct State {
        var counters = Snapshot()
        /// (time in ms, updates, bytes) at the previous rate computation.
        var rateBase: (at: Int64, updates: Int, bytes: Int) = (0, 0, 0)
        var lastRates: (updates: Double, bytes: Double) = (0, 0)
    }

    private let state = NIOLockedValueBox(State())
    /// This node's name (`lightstreamer_node_info`), and its readiness (`lightstreamer_ready`,
    /// `lightstreamer_draining`).
    let nodeName: String?
    let health: ServerHealth?

    /// Remote adapters (`lightstreamer_remote_*`).
    let remoteEndpoints: [RemoteAdapterEndpoint]

    public init(nodeName: String? = nil, health: ServerHealth? = nil, remoteEndpoints: [RemoteAdapterEndpoint] = []) {
        self.nodeName = nodeName
        self.health = health
        self.remoteEndpoints = remoteEndpoints
    }

    public var snapshot: Snapshot { state.withLockedValue { $0.counters } }

    func update(_ body: (inout Snapshot) -> Void) {
        state.withLockedValue { body(&$0.counters) }
    }

    func sent(bytes: Int, updates: Int) {
        state.withLockedValue {
            $0.counters.bytesSent += bytes
            $0.counters.updatesSent += updates
        }
    }

    /// Updates and bytes per second since the previous call (at least one second apart;
    /// calls closer than that return the last figures).
    public func rates(nowMillis: Int64) -> (updatesPerSecond: Double, bytesPerSecond: Double) {
        state.withLockedValue { s -> (updatesPerSecond: Double, bytesPerSecond: Double) in
            let elapsed = nowMillis - s.rateBase.at
            if s.rateBase.at == 0 {
                s.rateBase = (nowMillis, s.counters.updatesSent, s.counters.bytesSent)
                return (0, 0)
            }
            guard elapsed >= 1000 else { return (s.lastRates.updates, s.lastRates.bytes) }
            let seconds = Double(elapsed) / 1000
            s.lastRates = (Double(s.counters.updatesSent - s.rateBase.updates) / seconds,
                           Double(s.counters.bytesSent - s.rateBase.bytes) / seconds)
            s.rateBase = (nowMillis, s.counters.updatesSent, s.counters.bytesSent)
            return (s.lastRates.updates, s.lastRates.bytes)
        }
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func prometheusText(nowMillis: Int64) -> String {
        let c = snapshot
        let r = rates(nowMillis: nowMillis)
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: String, labels: String = "") {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name)\(labels) \(value)\n"
        }
        if let nodeName {
            // Names are checked by `NodeName`: nothing to escape in the label value.
            metric("lightstreamer_node_info", "gauge", "This server node; its name is the node label.", "1",
                   labels: "{node=\"\(nodeName)\"}")
        }
        if let health {
            let r = health.readiness
            metric("lightstreamer_ready", "gauge", "1 when /health/ready answers 200 (new sessions welcome).", r.ready ? "1" : "0")
            metric("lightstreamer_draining", "gauge", "1 while the node drains (creates refused, sessions kept).",
                   health.isDraining ? "1" : "0")
        }
        metric("lightstreamer_sessions_active", "gauge", "Sessions currently alive.", String(c.sessionsActive))
        metric("lightstreamer_sessions_created_total", "counter", "Sessions created since start.", String(c.sessionsCreated))
        metric("lightstreamer_subscriptions_active", "gauge", "Subscriptions currently active.", String(c.subscriptionsActive))
        metric("lightstreamer_updates_sent_total", "counter", "U lines written to clients.", String(c.updatesSent))
        metric("lightstreamer_bytes_sent_total", "counter", "Bytes of TLCP lines written to clients.", String(c.bytesSent))
        metric("lightstreamer_updates_per_second", "gauge", "U lines written per second, over the last scrape interval.",
               format(r.updatesPerSecond))
        metric("lightstreamer_bytes_per_second", "gauge", "Bytes written per second, over the last scrape interval.",
               format(r.bytesPerSecond))
        metric("lightstreamer_connections_open", "gauge", "Open client connections (WS and HTTP).", String(c.connectionsOpen))
        metric("lightstreamer_requests_total", "counter", "TLCP requests received.", String(c.requests))
        metric("lightstreamer_request_errors_total", "counter", "TLCP requests refused (CONERR, REQERR, ERROR).",
               String(c.requestErrors))
        metric("lightstreamer_slow_clients_closed_total", "counter",
               "Connections closed because their client did not read (unsent bytes past maxBacklogBytes).",
               String(c.slowClientsClosed))
        metric("lightstreamer_sessions_closed_for_backlog_total", "counter",
               "Sessions closed because they held more undelivered data than maxBacklogBytes.",
               String(c.sessionsClosedForBacklog))
        metric("lightstreamer_updates_conflated_total", "counter",
               "MERGE updates replaced by a newer one of the same item while their session's event loop was behind.",
               String(c.updatesConflated))
        if !remoteEndpoints.isEmpty { out += remoteText() }
        return out
    }

    /// One series per remote adapter, labelled with its adapter set and role.
    private func remoteText() -> String {
        let rows = remoteEndpoints.map { e in
            (labels: "{adapter_set=\"\(Self.labelValue(e.adapterSet))\",adapter=\"\(Self.labelValue(e.role))\"}",
             connected: e.isConnected, counters: e.counters)
        }
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ value: (RemoteConnectionCounters, Bool) -> Int) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for r in rows { out += "\(name)\(r.labels) \(value(r.counters, r.connected))\n" }
        }
        family("lightstreamer_remote_adapter_connected", "gauge", "1 while the remote adapter is connected and initialized.") { $1 ? 1 : 0 }
        family("lightstreamer_remote_adapter_handshakes_total", "counter", "Remote adapter connections that completed the handshake.") { c, _ in c.handshakes }
        family("lightstreamer_remote_adapter_disconnections_total", "counter",
               "Remote adapter connections closed (lost, refused credentials, failed handshake).") { c, _ in c.disconnections }
        family("lightstreamer_remote_adapter_failed_requests_total", "counter",
               "Requests to the remote adapter answered with an error, unanswered in time, or sent with no remote.") { c, _ in c.failedRequests }
        family("lightstreamer_remote_adapter_failures_total", "counter", "Failures reported by the remote adapter (FAL).") { c, _ in c.remoteFailures }
        return out
    }

    /// A Prometheus label value: backslash, double quote and line feed escaped.
    static func labelValue(_ s: String) -> String {
        var out = ""
        for ch in s {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(ch)
            }
        }
        return out
    }

    private func format(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    }
}
