import TLCP

extension SessionEngine {
    /// Where the engine is in the life of a session. Everything that lives and dies with a
    /// session is held by `.active`, so ending a session is replacing that case.
    enum State {
        /// No session and no create request out: disconnected, or waiting to retry.
        case idle
        /// A create request is out; its stream has not brought a session yet.
        case creating(Stream)
        /// A session exists (its CONOK arrived).
        case active(Session)
    }

    /// One session: what CONOK gave, its stream, and the bookkeeping that ends with it.
    struct Session {
        var id: String
        var requestLimit: Int
        var keepaliveMillis: Int
        /// The control link of CONOK, when used.
        var controlAddress: ServerAddress?
        /// A bind or recovery request of this session was given up before its answer. The server
        /// may still act on it (a request it reads late, or one whose answer was lost) and count
        /// as delivered what it wrote there, so a plain bind could skip notifications: from then on
        /// every bind says how many the client has (`LS_recovery_from`). See docs/RECOVERY.md.
        var bindsAskRecovery = false
        var realMaxBandwidth: RealMaxBandwidth?
        /// The connection carrying the session's notifications, when one is open.
        var stream: Stream?
        /// A recovery under way.
        var recovery: Recovery?
        /// A transport switch (force_rebind) is waiting for its LOOP.
        var switchPending = false
        /// After a LOOP ending a poll: the next poll asks for the LOOP delay as `LS_polling_millis`
        /// and the idle time of that poll's CONOK as `LS_idle_millis` (docs/protocol/TLCP.md §2.2,
        /// §6 E10).
        var nextPoll: (pollingMillis: Int, idleMillis: Int)?
        /// What each request id sent in this session is for, until its reply.
        var requests: [String: RequestPurpose] = [:]
        /// The HTTP control request awaiting its response (one at a time over HTTP).
        var httpControlInFlight: ConnectionID?
        /// The HTTP msg request awaiting its response (one at a time over HTTP).
        var httpMessageInFlight: ConnectionID?
        /// Next message progressive per sequence (`UNORDERED_MESSAGES` for none).
        var messageProgressives: [String: Int] = [:]

        init(id: String, requestLimit: Int, keepaliveMillis: Int, controlAddress: ServerAddress?, stream: Stream?) {
            self.id = id
            self.requestLimit = requestLimit
            self.keepaliveMillis = keepaliveMillis
            self.controlAddress = controlAddress
            self.stream = stream
        }
    }

    /// The connection that carries a session's notifications (or a create's answer).
    struct Stream {
        enum Kind: Equatable { case create, bind, recovery }
        var connection: ConnectionID
        var transport: StreamTransport
        var kind: Kind
        var gotConok = false
        /// LOOP or END arrived: the connection's end is expected.
        var ended = false
        var boundAt: Int64 = 0
        var sentAt: Int64 = 0
        /// The third CONOK argument: on a poll, the idle time the server granted.
        var conokIdleMillis: Int?
        /// Stream-Sense asked the server (force_rebind) to unbind this mute HTTP stream.
        var fallbackRebindRequested = false
        /// Opened with SYNC on (`slowingEnabled` when it was sent): SYNC drives slowing.
        var slowing = false
        /// A bind that carried `LS_recovery_from`: its PROG may be lower than the count (as in a
        /// recovery), never higher.
        var asksRecovery = false
    }

    /// A session recovery under way (docs/protocol/TLCP.md §5.5).
    struct Recovery {
        var startedAt: Int64
        var attemptAt: Int64 = 0
        var cause: String
    }

    // MARK: access

    /// The current session, if any.
    /// Whether a session is open (no copy of it, unlike `session != nil`).
    var hasSession: Bool {
        if case .active = state { return true }
        return false
    }

    var session: Session? {
        if case .active(let s) = state { return s }
        return nil
    }

    /// Runs `body` on the current session in place; nil when there is none.
    @discardableResult
    mutating func withSession<R>(_ body: (inout Session) -> R) -> R? {
        guard case .active(var s) = state else { return nil }
        // `.idle` while `body` runs keeps `s` the only copy (no copy-on-write of its tables).
        state = .idle
        defer { state = .active(s) }
        return body(&s)
    }

    /// The stream of the create under way or of the session. Setting nil drops the create
    /// (back to `.idle`) or leaves the session without a stream; setting a stream with no
    /// session starts a create.
    var stream: Stream? {
        get {
            switch state {
            case .idle: return nil
            case .creating(let s): return s
            case .active(let session): return session.stream
            }
        }
        set {
            switch state {
            case .idle, .creating:
                state = newValue.map(State.creating) ?? .idle
            case .active:
                withSession { $0.stream = newValue }
            }
        }
    }

    /// The current recovery, if any.
    var recovery: Recovery? { session?.recovery }

    /// What a request id of the current session is for.
    var requests: [String: RequestPurpose] { session?.requests ?? [:] }

    /// Removes a request id of the current session, returning what it was for.
    mutating func takeRequest(_ id: String) -> RequestPurpose? {
        withSession { $0.requests.removeValue(forKey: id) } ?? nil
    }
}
