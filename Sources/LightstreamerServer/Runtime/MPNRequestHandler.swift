import TLCP

/// Who asks for an MPN operation: the session's adapter set (its real name, not an alias),
/// user and id.
public struct MPNSessionContext: Sendable, Hashable {
    /// The session's adapter set (its real name).
    public var adapterSet: String
    /// The session's user, if any.
    public var user: String?
    /// The session's id.
    public var sessionId: String

    /// A context with its properties.
    public init(adapterSet: String, user: String?, sessionId: String) {
        self.adapterSet = adapterSet
        self.user = user
        self.sessionId = sessionId
    }
}

/// Serves the MPN operations of sessions (the MPN Module implements it; it lives in its own
/// target that depends on this one). `handle` returns only once the outcome is durable: the
/// session acknowledges it at once. Refusals carry the protocol code for REQERR (40–68, ≤0).
/// The session has already checked that the device of an operation was registered in it.
public protocol MPNRequestHandler: Sendable {
    /// Carries out one operation; returns once its outcome is durable, or the refusal.
    func handle(_ operation: ControlOperation, context: MPNSessionContext) async -> Result<MPNOutcome, SessionRefusal>
    /// A session ended: what the handler remembers of it (the devices registered in it) can go.
    func sessionClosed(sessionId: String)
}

extension MPNRequestHandler {
    /// Default: nothing to forget.
    public func sessionClosed(sessionId: String) {}
}
