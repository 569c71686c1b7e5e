import CoreMetrics

extension ServerMetrics {
    /// The swift-metrics handles of the server's own figures (names in docs/METRICS.md).
    struct Handles: Sendable {
        let sessionsActive, subscriptionsActive, connectionsOpen: Gauge
        let sessionsCreated, updatesSent, bytesSent, requests, requestErrors: Counter
        let slowClientsClosed, slowClientsOverBudget, sessionsClosedForBacklog, updatesConflated: Counter
        let updatesPerSecond, bytesPerSecond: Gauge
        let residentBytes, virtualBytes, openFDs, maxFDs, startTime: Gauge
        let cpuSeconds: FloatingPointCounter

        init(_ b: MetricsBackend) {
            sessionsActive = b.gauge("lightstreamer_sessions_active")
            subscriptionsActive = b.gauge("lightstreamer_subscriptions_active")
            connectionsOpen = b.gauge("lightstreamer_connections_open")
            sessionsCreated = b.counter("lightstreamer_sessions_created_total")
            updatesSent = b.counter("lightstreamer_updates_sent_total")
            bytesSent = b.counter("lightstreamer_bytes_sent_total")
            requests = b.counter("lightstreamer_requests_total")
            requestErrors = b.counter("lightstreamer_request_errors_total")
            slowClientsClosed = b.counter("lightstreamer_slow_clients_closed_total")
            slowClientsOverBudget = b.counter("lightstreamer_slow_clients_over_budget_total")
            sessionsClosedForBacklog = b.counter("lightstreamer_sessions_closed_for_backlog_total")
            updatesConflated = b.counter("lightstreamer_updates_conflated_total")
            updatesPerSecond = b.gauge("lightstreamer_updates_per_second")
            bytesPerSecond = b.gauge("lightstreamer_bytes_per_second")
            residentBytes = b.gauge("process_resident_memory_bytes")
            virtualBytes = b.gauge("process_virtual_memory_bytes")
            openFDs = b.gauge("process_open_fds")
            maxFDs = b.gauge("process_max_fds")
            startTime = b.gauge("process_start_time_seconds")
            cpuSeconds = b.floatingCounter("process_cpu_seconds_total")
            // Present (at 0) from the start.
            for g in [sessionsActive, subscriptionsActive, connectionsOpen, updatesPerSecond, bytesPerSecond] { g.record(0) }
            for c in [
                sessionsCreated, updatesSent, bytesSent, requests, requestErrors, slowClientsClosed,
                slowClientsOverBudget, sessionsClosedForBacklog, updatesConflated,
            ] { c.increment(by: 0) }
        }

        /// Reports what changed between two snapshots (counters by their increase, gauges by
        /// their new value).
        func report(from a: Snapshot, to b: Snapshot) {
            func count(_ c: Counter, _ x: Int, _ y: Int) { if y > x { c.increment(by: Int64(y - x)) } }
            func level(_ g: Gauge, _ x: Int, _ y: Int) { if y != x { g.record(y) } }
            level(sessionsActive, a.sessionsActive, b.sessionsActive)
            level(subscriptionsActive, a.subscriptionsActive, b.subscriptionsActive)
            level(connectionsOpen, a.connectionsOpen, b.connectionsOpen)
            count(sessionsCreated, a.sessionsCreated, b.sessionsCreated)
            count(updatesSent, a.updatesSent, b.updatesSent)
            count(bytesSent, a.bytesSent, b.bytesSent)
            count(requests, a.requests, b.requests)
            count(requestErrors, a.requestErrors, b.requestErrors)
            count(slowClientsClosed, a.slowClientsClosed, b.slowClientsClosed)
            count(slowClientsOverBudget, a.slowClientsOverBudget, b.slowClientsOverBudget)
            count(sessionsClosedForBacklog, a.sessionsClosedForBacklog, b.sessionsClosedForBacklog)
            count(updatesConflated, a.updatesConflated, b.updatesConflated)
        }
    }

    /// One remote adapter's series, labelled with its adapter set and role.
    struct RemoteHandles: Sendable {
        let connected: Gauge
        let handshakes, disconnections, failedRequests, failures: Counter

        init(_ b: MetricsBackend, adapterSet: String, role: String) {
            let d = [("adapter_set", adapterSet), ("adapter", role)]
            connected = b.gauge("lightstreamer_remote_adapter_connected", d)
            handshakes = b.counter("lightstreamer_remote_adapter_handshakes_total", d)
            disconnections = b.counter("lightstreamer_remote_adapter_disconnections_total", d)
            failedRequests = b.counter("lightstreamer_remote_adapter_failed_requests_total", d)
            failures = b.counter("lightstreamer_remote_adapter_failures_total", d)
            connected.record(0)
            for c in [handshakes, disconnections, failedRequests, failures] { c.increment(by: 0) }
        }

        func report(_ c: RemoteConnectionCounters, connected isConnected: Bool, since last: RemoteConnectionCounters) {
            connected.record(isConnected ? 1 : 0)
            func count(_ h: Counter, _ x: Int, _ y: Int) { if y > x { h.increment(by: Int64(y - x)) } }
            count(handshakes, last.handshakes, c.handshakes)
            count(disconnections, last.disconnections, c.disconnections)
            count(failedRequests, last.failedRequests, c.failedRequests)
            count(failures, last.remoteFailures, c.remoteFailures)
        }
    }
}
