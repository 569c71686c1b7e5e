import TLCP

/// The client's session logic as a state machine without I/O (ARCHITECTURE.md): each call to
/// `handle(_:now:)` takes one event (an API call, a connection event, a line, a timer) and
/// returns the actions the runtime must carry out, in order. Time comes in with the event, so
/// tests drive the engine with a fake clock.
///
/// The engine is split by concern: `SessionEngine+Connect` (create, bind, Stream-Sense, retry),
/// `+Recovery`, `+Lines` (server notifications), `+Requests` (control/msg queues, batching,
/// heartbeats), `+Subscriptions` and `+Messages`.
struct SessionEngine {
    /// Identifies one network connection the engine asked the runtime to open.
    typealias ConnectionID = Int

    // MARK: configuration
    var settings: Settings
    var random: SplitMix64

    // MARK: state visible to the API
    private(set) var status: ClientStatus = .disconnected

    // MARK: bookkeeping
    var nextConnectionID = 1
    var nextRequestID = 1
    var nextSubscriptionID = 1
    var nextInternalKey = -1
    var connections: [SessionEngine.ConnectionID: ConnectionRole] = [:]
    var now: Int64 = 0
    var actions: [Action] = []

    // MARK: session
    var session: SessionState?
    var stream: StreamState?
    var webSocket: WebSocketState?
    var target: StreamTransport = .wsStreaming
    var retry = RetryState()
    var recovery: RecoveryState?
    /// A transport switch (force_rebind) is waiting for its LOOP.
    var switchPending = false
    /// After a LOOP ending a poll: the next poll asks for the LOOP delay as `LS_polling_millis`
    /// and the idle time of that poll's CONOK as `LS_idle_millis` (docs/protocol/TLCP.md §2.2, §6
    /// E10).
    var nextPoll: (pollingMillis: Int, idleMillis: Int)?
    /// The WS create failed and the session was created over HTTP: the first bind tries WS
    /// once more before HTTP streaming (docs/protocol/TLCP.md §5.3, §6 E9).
    var retryWebSocketOnBind = false
    var lastDataAt: Int64 = 0
    var wantsConnection = false
    /// A create after CONERR 5 carries `LS_ttl_millis=unlimited` over HTTP.
    var nextCreateWithTTL = false

    // MARK: requests
    var controlQueue: [PendingControl] = []
    var messageQueue: [Int] = []
    var httpControlInFlight: SessionEngine.ConnectionID?
    var httpMessageInFlight: SessionEngine.ConnectionID?
    var requests: [String: RequestPurpose] = [:]
    var lastRequestSentAt: Int64 = 0

    // MARK: subscriptions and messages
    var subscriptions: [Int: EngineSubscription] = [:]
    var subscriptionKeyByID: [Int: Int] = [:]
    var messages: [Int: EngineMessage] = [:]
    /// Next progressive per sequence (`UNORDERED_MESSAGES` for none), per session.
    var messageProgressives: [String: Int] = [:]

    init(settings: Settings = Settings(), seed: UInt64 = 0x5EED) {
        self.settings = settings
        self.random = SplitMix64(seed: seed)
    }

    /// Handles one event at time `now` (ms, monotonic) and returns the actions to run.
    mutating func handle(_ event: Event, now: Int64) -> [Action] {
        self.now = max(self.now, now)
        actions.removeAll(keepingCapacity: true)
        switch event {
        case .connect: connectRequested()
        case .disconnect: disconnectRequested()
        case .settingsChanged(let s, let property): settingsChanged(s, property: property)
        case .subscribe(let key, let spec): subscribeRequested(key: key, spec: spec)
        case .unsubscribe(let key): unsubscribeRequested(key: key)
        case .changeFrequency(let key, let f): frequencyChangeRequested(key: key, frequency: f)
        case .sendMessage(let key, let spec): messageRequested(key: key, spec: spec)
        case .externalControl(let token, let op, let cause, let forSession):
            externalControlsRequested([SessionEngine.ExternalControl(token: token, operation: op, cause: cause, session: forSession)])
        case .externalControls(let list): externalControlsRequested(list)
        case .webSocketOpened(let id): webSocketOpened(id)
        case .lineReceived(let id, let line): lineReceived(id, line)
        case .connectionClosed(let id): connectionEnded(id, failure: nil)
        case .connectionFailed(let id, let reason): connectionEnded(id, failure: reason)
        case .connectionRejected(let id, let code, let message): connectionRejected(id, code: code, message: message)
        case .timerFired(let timer): timerFired(timer)
        }
        return actions
    }

    // MARK: helpers used everywhere

    mutating func emit(_ action: Action) { actions.append(action) }
    mutating func notify(_ n: Notification) { actions.append(.notify(n)) }
    mutating func log(_ level: SessionEngine.LogLevel, _ message: @autoclosure () -> String) { actions.append(.log(level, message())) }

    mutating func setStatus(_ s: ClientStatus) {
        guard s != status else { return }
        status = s
        notify(.status(s))
    }

    /// Arms a timer; the delay is held to `ServerNumbers.millis` (0 … one day).
    mutating func schedule(_ t: SessionEngine.Timer, after ms: Int) { emit(.schedule(t, after: ServerNumbers.millis(ms))) }
    mutating func cancel(_ t: SessionEngine.Timer) { emit(.cancel(t)) }

    mutating func newConnectionID(_ role: ConnectionRole) -> SessionEngine.ConnectionID {
        let id = nextConnectionID
        nextConnectionID += 1
        connections[id] = role
        return id
    }

    mutating func newRequestID(_ purpose: RequestPurpose) -> String {
        let id = String(nextRequestID)
        nextRequestID += 1
        requests[id] = purpose
        return id
    }

    mutating func closeConnection(_ id: SessionEngine.ConnectionID) {
        guard connections.removeValue(forKey: id) != nil else { return }
        emit(.close(id))
    }

    /// A random delay in 0...max.
    mutating func randomDelay(upTo max: Int) -> Int {
        guard max > 0 else { return 0 }
        return Int(random.next() % (UInt64(max) + 1))
    }

    /// The address new connections of the current session go to (control link unless ignored).
    var sessionAddress: ServerAddress? {
        if let a = session?.controlAddress { return a }
        return configuredAddress
    }

    var configuredAddress: ServerAddress? {
        guard let text = settings.serverAddress, case .success(let a) = ServerAddress.parse(text) else { return nil }
        return a
    }

    /// Headers for an HTTP request or WS upgrade.
    func extraHeaders(creating: Bool) -> [String: String] {
        guard let h = settings.httpExtraHeaders else { return [:] }
        if settings.httpExtraHeadersOnSessionCreationOnly && !creating { return [:] }
        return h
    }
}

/// What a connection is for.
enum ConnectionRole: Equatable {
    case webSocket
    case httpStream
    case httpControl([String])
    case httpMessage([String])
    case httpHeartbeat
    /// The destroy request sent by `disconnect()`: its answer is not needed.
    case httpFireAndForget
}

/// The current session.
struct SessionState {
    var id: String
    var requestLimit: Int
    var keepaliveMillis: Int
    /// The control link of CONOK, when used.
    var controlAddress: ServerAddress?
    /// Data notifications received so far (docs/protocol/TLCP.md §5.5).
    var dataCount = 0
    /// Data notifications to drop after a recovery (count − PROG).
    var skip = 0
    /// A bind or recovery request of this session was given up before its answer. The server
    /// may still act on it (a request it reads late, or one whose answer was lost) and count
    /// as delivered what it wrote there, so a plain bind could skip notifications: from then on
    /// every bind says how many the client has (`LS_recovery_from`). See docs/RECOVERY.md.
    var bindsAskRecovery = false
    var realMaxBandwidth: RealMaxBandwidth?
}

/// The connection that carries the session's notifications.
struct StreamState {
    enum Kind: Equatable { case create, bind, recovery }
    var connection: SessionEngine.ConnectionID
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

struct WebSocketState {
    var connection: SessionEngine.ConnectionID
    var url: String
    var open = false
    /// Messages waiting for the socket to open.
    var outbox: [String] = []
    /// A session was bound on this socket (controls may omit LS_session).
    var sessionBound = false
}

struct RetryState {
    /// Consecutive failed attempts to create a session.
    var failures = 0
    var attemptStartedAt: Int64 = 0
    var oldSession: String?
    var cause = "api"
}

struct RecoveryState {
    var startedAt: Int64
    var attemptAt: Int64 = 0
    var cause: String
}

/// What a request id was used for.
enum RequestPurpose: Equatable {
    case add(key: Int)
    case delete(key: Int)
    case reconf(key: Int)
    case constrain
    case forceRebind
    case destroy
    case external(token: Int)
    case message(key: Int)
}

/// A control waiting to be sent.
enum PendingControl: Equatable {
    case add(key: Int)
    case delete(subscriptionId: Int, key: Int)
    case reconf(key: Int)
    case constrain
    case forceRebind(cause: String)
    case external(token: Int, ControlOperation, cause: String? = nil)
}

/// A small deterministic random generator (tests seed it).
struct SplitMix64: Sendable {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
