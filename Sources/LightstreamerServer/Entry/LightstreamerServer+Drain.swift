import Logging

extension ServerOptions {
    /// Default of `drainMillis`: no wait (the sessions are told to move at once).
    public static let defaultDrainMillis = 0
    /// Longest drain accepted (one hour).
    public static let maxDrainMillis = 3_600_000
}

extension LightstreamerServer {
    /// Takes this node out of rotation before it stops (docs/CLUSTER.md, "Draining"):
    /// `/health/ready` answers 503 and creates get CONERR 5 (`SessionManager.drainingRefusal`)
    /// from now on, while existing sessions go on as usual. Returns once no session is left,
    /// or after `millis` (default `options.drainMillis`, at most `ServerOptions.maxDrainMillis`),
    /// or at once when the task is cancelled; sessions still there then get END 48, on which
    /// clients open a new session at once (through the balancer, on another node).
    /// `run()` calls it on graceful shutdown (SIGTERM), before `shutdown()`.
    public func drain(millis: Int? = nil) async {
        let limit = max(0, min(millis ?? options.drainMillis, ServerOptions.maxDrainMillis))
        _ = health.startDraining()
        logger.notice(
            "draining: new sessions refused",
            metadata: ["sessions": "\(manager.sessionCount)", "drainMillis": "\(limit)"])
        await waitForNoSession(until: ContinuousClock.now + .milliseconds(limit))
        let remaining = manager.sessionCount
        if remaining > 0 {
            manager.closeAll(code: Self.drainEndCode, message: "Server node shutting down: open a new session")
        }
        logger.notice("drained", metadata: ["sessionsToldToMove": "\(remaining)"])
    }

    /// Returns once no session is left, at `deadline`, or on cancellation, whichever comes first.
    private func waitForNoSession(until deadline: ContinuousClock.Instant) async {
        let manager = self.manager
        // Watching before the count is read: a last session closing in between is not missed.
        let (emptied, watching) = manager.noSessionLeft.watch()
        defer { watching.finish() }
        guard manager.sessionCount > 0, deadline > .now else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in emptied where manager.sessionCount == 0 { return }
            }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
    }

    /// END code for sessions still open when a drain ends: 48 ("open a new session at once"),
    /// which official clients follow instead of reporting an error.
    public static let drainEndCode = 48
}
