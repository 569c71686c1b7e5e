/// One session as the dashboard shows it.
struct SessionSummary: Sendable, Equatable {
    var id: String
    var user: String?
    var address: String?
    var adapterSet: String
    /// `WS-STREAMING`, `HTTP-POLLING`, … or `UNBOUND`.
    var transport: String
    var ageMillis: Int64
    /// Engine events waiting for the session's event loop.
    var backlog: Int
    var subscriptions: Int
}

/// What the `MONITOR` adapter set reads once a second.
struct MonitorInputs: Sendable {
    var nowMillis: Int64
    var counters: ServerMetrics.Snapshot
    var updatesReceived: Int
    /// Updates replaced or dropped by frequency limits since start.
    var updatesFiltered: Int
    var items: Int
    var sessions: [SessionSummary]
    var sessionsBlocked: Bool
    var mpn: MPNMonitorFigures?
}
