import NIOConcurrencyHelpers

/// What a load balancer asks a node (docs/CLUSTER.md, "Health endpoints"):
/// - live: the process answers (`/health/live`, 200 until it exits);
/// - ready: it should be given new sessions (`/health/ready`): started (adapters set up), not
///   draining, and every condition reported by a component (the MPN Module reports
///   `mpnStore`) is met.
public final class ServerHealth: Sendable {
    /// The answer of `/health/ready`.
    public struct Readiness: Sendable, Hashable {
        /// Whether the node should be given new sessions.
        public var ready: Bool
        /// Why not ready, in a stable order (`starting`, `draining`, then failed conditions as
        /// `name: reason`).
        public var reasons: [String]
    }

    private struct State {
        var started = false
        var draining = false
        /// Condition name → why it is not met (absent: met).
        var failures: [String: String] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// Health of a node that has not started yet.
    public init() {}

    /// Records that a component's condition is met (`failure` nil) or why it is not.
    public func setCondition(_ name: String, failure: String?) {
        state.withLockedValue { $0.failures[name] = failure }
    }

    /// Whether the node is draining (new sessions refused).
    public var isDraining: Bool { state.withLockedValue { $0.draining } }

    /// Whether the node is ready now, and why not.
    public var readiness: Readiness {
        state.withLockedValue { s in
            var reasons: [String] = []
            if !s.started { reasons.append("starting") }
            if s.draining { reasons.append("draining") }
            for (name, why) in s.failures.sorted(by: { $0.key < $1.key }) { reasons.append("\(name): \(why)") }
            return Readiness(ready: reasons.isEmpty, reasons: reasons)
        }
    }

    func markStarted() { state.withLockedValue { $0.started = true } }

    /// Returns false when it was already draining.
    func startDraining() -> Bool {
        state.withLockedValue { s in
            defer { s.draining = true }
            return !s.draining
        }
    }
}
