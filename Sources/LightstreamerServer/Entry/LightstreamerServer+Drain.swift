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
        logger.notice("draining: new sessions refused",
                      metadata: ["sessions": "\(manager.sessionCount)", "drainMillis": "\(limit)"])
        let deadline = ContinuousClock.now + .milliseconds(limit)
        while manager.sessionCount > 0, !Task.isCancelled {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            try? await Task.sleep(for: min(left, .milliseconds(100)))
        }
        let remaining = manager.sessionCount
        if remaining > 0 {
            manager.closeAll(code: Self.drainEndCode, message: "Server node shutting down: open a new session")
        }
        logger.notice("drained", metadata: ["sessionsToldToMove": "\(remaining)"])
    }

    /// END code for sessions still open when a drain ends: 48 ("open a new session at once"),
    /// which official clients follow instead of reporting an error.
    public static let drainEndCode = 48
}
