import TLCP

/// Who asks for an MPN operation: the session's adapter set (its real name, not an alias),
/// user and id.
public struct MPNSessionContext: Sendable, Hashable {
    public var adapterSet: String
    public var user: String?
    public var sessionId: String

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
    func handle(_ operation: ControlOperation, context: MPNSessionContext) async -> Result<MPNOutcome, SessionRefusal>
    /// A session ended: what the handler remembers of it (the devices registered in it) can go.
    func sessionClosed(sessionId: String)
}

extension MPNRequestHandler {
    public func sessionClosed(sessionId: String) {}
}
