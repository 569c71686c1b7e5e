import TLCP

/// The client's session logic as a state machine without I/O (ARCHITECTURE.md): each call to
/// `handle(_:now:)` takes one event (an API call, a connection event, a line, a timer) and
/// returns the actions the runtime must carry out, in order. Time comes in with the event, so
/// tests drive the engine with a fake clock.
///
/// Where a session is in its life is one `State` value (`SessionEngine+State`): idle, a create
/// under way with its stream, or an active `Session` holding everything that ends with it.
/// The events in (`Event`) and the actions out (`Action`, with their `Notification`s) are
/// nested types, one file each.
///
/// The logic is split by concern: `SessionEngine+Connect` (create, bind, Stream-Sense, retry),
/// `+Recovery`, `+Lines` (server notifications), `+Requests` (control/msg queues, batching,
/// heartbeats), `+Subscriptions` and `+Messages`.
struct SessionEngine {
    // MARK: configuration
    var settings: Settings
    var random: SplitMix64

    // MARK: state visible to the API
    private(set) var status: ClientStatus = .disconnected

    // MARK: the session
    /// The session, or the create under way, with all that ends with it.
    var state: State = .idle

    // MARK: bookkeeping across sessions
    var nextConnectionID = 1
    var nextRequestID = 1
    var nextSubscriptionID = 1
    var nextInternalKey = -1
    var connections: [ConnectionID: ConnectionRole] = [:]
    var now: Int64 = 0
    var actions: [Action] = []
    var webSocket: WebSocket?
    var target: StreamTransport = .wsStreaming
    var retry = Retry()
    /// The WS create failed and the session was created over HTTP: the first bind tries WS
    /// once more before HTTP streaming (docs/protocol/TLCP.md §5.3, §6 E9).
    var retryWebSocketOnBind = false
    var wantsConnection = false
    /// A create after CONERR 5 carries `LS_ttl_millis=unlimited` over HTTP.
    var nextCreateWithTTL = false
    /// When the last request went out, for the reverse heartbeat. It spans sessions: the first
    /// heartbeat of a new session counts from the last request of the previous one.
    var lastRequestSentAt: Int64 = 0

    // MARK: requests, subscriptions and messages the application keeps across sessions
    var controlQueue: [PendingControl] = []
    var messageQueue: [Int] = []
    var subscriptions: [Int: EngineSubscription] = [:]
    /// The keys of `subscriptions` by the id each got in the current session.
    var subscriptionKeyByID: [Int: Int] = [:] {
        didSet { lastUpdateKey = nil }
    }
    /// The subscription id of the last `U` line and its key in `subscriptionKeyByID` (most lines
    /// are for the same subscription): forgotten whenever `subscriptionKeyByID` changes.
    var lastUpdateKey: (subscriptionId: Int, key: Int)?
    /// The session's line counts (see `LineCount` for why they are not in `Session`).
    var lines = LineCount()
    /// The tokens of the last `U` line (reused from line to line).
    var updateTokens = UpdateLineTokens()
    var messages: [Int: EngineMessage] = [:]

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
            externalControlsRequested([ExternalControl(token: token, operation: op, cause: cause, session: forSession)])
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
    mutating func log(_ level: LogLevel, _ message: @autoclosure () -> String) { actions.append(.log(level, message())) }

    mutating func setStatus(_ s: ClientStatus) {
        guard s != status else { return }
        status = s
        notify(.status(s))
    }

    /// Arms a timer; the delay is held to `ServerNumbers.millis` (0 … one day).
    mutating func schedule(_ t: Timer, after ms: Int) { emit(.schedule(t, after: ServerNumbers.millis(ms))) }
    mutating func cancel(_ t: Timer) { emit(.cancel(t)) }

    mutating func newConnectionID(_ role: ConnectionRole) -> ConnectionID {
        let id = nextConnectionID
        nextConnectionID += 1
        connections[id] = role
        return id
    }

    mutating func newRequestID(_ purpose: RequestPurpose) -> String {
        let id = String(nextRequestID)
        nextRequestID += 1
        withSession { $0.requests[id] = purpose }
        return id
    }

    mutating func closeConnection(_ id: ConnectionID) {
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

/// Attempts to create a session, counted across sessions.
extension SessionEngine {
    struct Retry {
        /// Consecutive failed attempts to create a session.
        var failures = 0
        var attemptStartedAt: Int64 = 0
        var oldSession: String?
        var cause = "api"
    }
}
