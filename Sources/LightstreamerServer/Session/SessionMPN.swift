import TLCP

/// One MPN operation (`register`, `activate`, `pn_reconf`, `deactivate`, `reset_badge`) handed
/// to the MPN Module. A session hands them over one at a time, in arrival order.
public struct MPNDispatch: Sendable, Hashable {
    /// Identifies the operation in `SessionStateMachine.mpnHandled`.
    public var id: Int
    /// The operation as the client sent it.
    public var operation: ControlOperation
}

/// What the MPN Module did for one operation, already committed to its store: the session
/// acknowledges it and emits the matching data notification(s).
public enum MPNOutcome: Sendable, Hashable {
    /// `MPNREG,<deviceId>,<adapterName>`.
    case registered(deviceId: String, adapterName: String)
    /// `MPNOK,<subId>,<mpnSubscriptionId>`.
    case activated(subscriptionId: Int, mpnSubscriptionId: String)
    /// `MPNCONF,<mpnSubscriptionId>`.
    case reconfigured(mpnSubscriptionId: String)
    /// One `MPNDEL,<id>` per removed subscription (possibly none).
    case deactivated(mpnSubscriptionIds: [String])
    /// `MPNZERO,<deviceId>`.
    case badgeReset(deviceId: String)
}

/// The MPN state of one session: the devices registered through it and the operations waiting.
struct SessionMPNState: Sendable {
    struct Pending: Sendable {
        var id: Int
        var origin: RequestOrigin
        var requestId: String
        var operation: ControlOperation
    }

    /// Device ids returned by MPNREG in this session: the other operations need one of them.
    var devices: Set<String> = []
    var waiting: [Pending] = []
    var inFlight: Pending?
    var nextId = 1
}

/// An immutable box for `SessionMPNState` (a new box per change keeps copies of the machine
/// independent).
final class SessionMPNStateBox: Sendable {
    let value: SessionMPNState
    init(_ value: SessionMPNState) { self.value = value }
}
