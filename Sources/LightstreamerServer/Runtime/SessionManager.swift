import Logging
import NIOConcurrencyHelpers
import NIOCore
import TLCP

/// All live sessions: creation (authentication through the Metadata Adapter), lookup for
/// binds, controls, messages and heartbeats, and removal.
public final class SessionManager: Sendable {
    let engine: ItemEngine
    let settings: SessionSettings
    /// `settings`, one copy pointed to by every session.
    let sharedSettings: SharedSessionSettings
    let metrics: ServerMetrics
    /// What all slow clients together may make the server hold (`maxTotalBacklogBytes`).
    let backlogBudget: BacklogBudget
    /// Readiness; while it is draining, creates are refused (`drainingRefusal`).
    let health: ServerHealth
    let logger: Logger
    private let pumps = NIOLockedValueBox<[ObjectIdentifier: DeliveryPump]>([:])

    /// The pump that runs engine-event batches of sessions on `loop`.
    func pump(for loop: any EventLoop) -> DeliveryPump {
        pumps.withLockedValue { p in
            let key = ObjectIdentifier(loop)
            if let existing = p[key] { return existing }
            let new = DeliveryPump(eventLoop: loop, delayMillis: settings.maxUpdateDelayMillis)
            p[key] = new
            return new
        }
    }
    private let wheels = NIOLockedValueBox<[ObjectIdentifier: KeepaliveWheel]>([:])

    /// The wheel that fires the keepalive timers of the sessions on `loop`: slots of a
    /// twentieth of the shortest keepalive (50 ms by default), timers up to the longest
    /// keepalive ahead.
    func keepaliveWheel(for loop: any EventLoop) -> KeepaliveWheel {
        wheels.withLockedValue { w in
            let key = ObjectIdentifier(loop)
            if let existing = w[key] { return existing }
            let granularity = Int64(min(100, max(5, settings.minKeepaliveMillis / 20)))
            let new = KeepaliveWheel(
                eventLoop: loop, granularityMillis: granularity,
                maxAheadMillis: Int64(max(settings.maxKeepaliveMillis, settings.defaultKeepaliveMillis)))
            w[key] = new
            return new
        }
    }

    /// Timers waiting on the keepalive wheels of all loops (stale ones included).
    var keepaliveTimersPending: Int { wheels.withLockedValue { $0.values.reduce(0) { $0 + $1.pendingCount } } }
    private let sessions = NIOLockedValueBox<[String: ServerSession]>([:])
    /// Sessions and creates in progress, in all and per client address (`maxSessions`,
    /// `maxSessionsPerAddress`): a create takes its place before it waits for the Metadata
    /// Adapter, so a burst of creates cannot pass the limits together.
    private let occupancy = NIOLockedValueBox(SessionOccupancy())
    private let trimmer = MemoryTrimmer()
    private let counter = NIOLockedValueBox<UInt64>(0)
    /// True while an administrator blocks new sessions (`AdminActions.newSessionsBlocked`).
    let admission = NIOLockedValueBox(false)

    let aliases: [String: String]

    let mpn: (any MPNRequestHandler)?

    init(
        engine: ItemEngine, settings: SessionSettings, metrics: ServerMetrics, logger: Logger,
        aliases: [String: String] = [:], mpn: (any MPNRequestHandler)? = nil, health: ServerHealth = ServerHealth()
    ) {
        self.health = health
        self.aliases = aliases
        self.engine = engine
        self.mpn = mpn
        var settings = settings
        settings.mpnEnabled = mpn != nil
        self.settings = settings
        self.sharedSettings = SharedSessionSettings(settings)
        self.metrics = metrics
        self.backlogBudget = BacklogBudget(limit: settings.maxTotalBacklogBytes)
        self.logger = logger
    }

    var sessionCount: Int { sessions.withLockedValue { $0.count } }

    /// Signalled each time a closed session leaves no session behind.
    let noSessionLeft = NoSessionLeftSignal()

    func session(_ id: String) -> ServerSession? { sessions.withLockedValue { $0[id] } }

    /// Every live session (for the `MONITOR` adapter set).
    var allSessions: [ServerSession] { sessions.withLockedValue { Array($0.values) } }

    private func newSessionId() -> String {
        let n = counter.withLockedValue { c -> UInt64 in
            c += 1
            return c
        }
        var rng = SystemRandomNumberGenerator()
        return SessionIdFormat.make(random: rng.next(), counter: n)
    }

    /// Creates a session and binds its first stream on `connection`. On refusal nothing was
    /// written: the caller answers CONERR with the code.
    func createSession(
        _ request: CreateSessionRequest, version: TLCPVersion, connection: any OutboundConnection,
        clientIP: String?, headers: [String: String], eventLoop: any EventLoop
    ) async -> Result<String, SessionRefusal> {
        let started = monotonicMillis()
        if health.isDraining { return .failure(Self.drainingRefusal(version: version)) }
        if admission.withLockedValue({ $0 }), (request.adapterSet ?? "DEFAULT") != MonitorAdapters.adapterSetName {
            return .failure(SessionRefusal(code: 10, message: "New sessions blocked by the administrator"))
        }
        if let refusal = occupancy.withLockedValue({ $0.reserve(address: clientIP, settings: settings) }) {
            return .failure(refusal)
        }
        let clock = ContinuousClock.now
        let result = await createReserved(
            request, version: version, connection: connection, clientIP: clientIP,
            headers: headers, eventLoop: eventLoop, started: started)
        if case .failure = result { occupancy.withLockedValue { $0.release(address: clientIP) } }
        metrics.requestHandled("create_session", nanoseconds: Self.nanoseconds(since: clock))
        return result
    }

    private func createReserved(
        _ request: CreateSessionRequest, version: TLCPVersion, connection: any OutboundConnection,
        clientIP: String?, headers: [String: String], eventLoop: any EventLoop,
        started: Int64
    ) async -> Result<String, SessionRefusal> {
        let requested = request.adapterSet ?? "DEFAULT"
        let setName = engine.adapterSet(named: requested) != nil ? requested : aliases[requested] ?? requested
        guard let adapterSet = engine.adapterSet(named: setName) else {
            return .failure(SessionRefusal(code: 2, message: "Adapter Set \(setName) not available"))
        }
        let metadata = adapterSet.metadata
        do {
            try await metadata.notifyUser(user: request.user, password: request.password, headers: headers, clientIP: clientIP)
        } catch {
            return .failure(Self.createRefusal(error, version: version))
        }
        // `LS_ttl_millis`: the client stops waiting after that long; a create that took longer
        // (a slow Metadata Adapter) is dropped with CONERR 5, and the client retries at once.
        if case .millis(let ttl)? = request.ttl, version.supports(.ttl), version.supports(.extendedCreateErrors),
            monotonicMillis() - started > Int64(ttl)
        {
            return .failure(SessionRefusal(code: 5, message: "Create not served within LS_ttl_millis"))
        }
        let id = newSessionId()
        do {
            var context = ["REMOTE_IP": clientIP ?? "", "PROTOCOL": version.protocolName]
            if let cid = request.clientId.split(separator: " ").first { context["CLIENT_ID"] = String(cid) }
            try await metadata.notifyNewSession(user: request.user, sessionId: id, clientContext: context)
        } catch {
            return .failure(Self.createRefusal(error, version: version))
        }
        // Only a session of the same user in the same adapter set may be replaced.
        if let old = request.oldSession, let previous = session(old), previous.user == request.user,
            previous.adapterSet.name == adapterSet.name
        {
            previous.run { m, now in m.serverClose(code: 32, message: "Replaced by a new session", now: now) }
        }
        let allowedMaxBandwidth = await metadata.allowedMaxBandwidth(user: request.user)
        let machine = SessionStateMachine(
            sessionId: id, version: version, create: request, connection: connection.connectionID,
            transport: connection.transport, clientIP: clientIP,
            allowedMaxBandwidth: allowedMaxBandwidth,
            sharedSettings: sharedSettings, now: monotonicMillis())
        let session = ServerSession(
            id: id, user: request.user, clientAddress: clientIP, adapterSet: adapterSet,
            eventLoop: eventLoop, manager: self, machine: machine, transport: connection.transport)
        sessions.withLockedValue { $0[id] = session }
        metrics.update {
            $0.sessionsActive += 1
            $0.sessionsCreated += 1
        }
        session.log(.info, "session created", metadata: ["protocol": "\(version)", "address": "\(clientIP ?? "")"])
        session.run(registering: connection) { m, now in m.start(now: now) }
        return .success(id)
    }

    /// The answer to a create while the node drains: CONERR 5 (overloaded, retry later), on
    /// which 2.2+ clients create again at once, through the balancer, most likely reaching
    /// another node; older clients know no retryable code and get 10 (new sessions blocked).
    static func drainingRefusal(version: TLCPVersion) -> SessionRefusal {
        version.supports(.extendedCreateErrors)
            ? SessionRefusal(code: 5, message: "Server node draining: retry on another node")
            : SessionRefusal(code: 10, message: "Server node draining: retry on another node")
    }

    static func createRefusal(_ error: any Error, version: TLCPVersion) -> SessionRefusal {
        switch error as? MetadataError {
        case .access(let code, let message)?:
            return SessionRefusal(code: code > 0 ? 1 : code, message: message)
        case .retryLater(let message)?:
            return version.supports(.extendedCreateErrors)
                ? SessionRefusal(code: 6, message: message)
                : SessionRefusal(code: 1, message: message)
        default:
            return SessionRefusal(code: 66, message: "Metadata Adapter error")
        }
    }

    /// Binds a stream. False when the session does not exist (the caller answers CONERR 20).
    func bind(
        _ request: BindSessionRequest, sessionId: String, version: TLCPVersion, connection: any OutboundConnection,
        clientIP: String?
    ) -> Bool {
        guard let session = session(sessionId) else { return false }
        session.log(.debug, "stream bound", metadata: ["transport": "\(connection.transport)"])
        let clock = ContinuousClock.now
        session.run(registering: connection) { m, now in
            m.bind(
                request, connection: connection.connectionID, transport: connection.transport, version: version,
                clientIP: clientIP, now: now)
        }
        session.streamBound(to: connection.connectionID)
        metrics.requestHandled("bind_session", nanoseconds: Self.nanoseconds(since: clock))
        return true
    }

    func control(_ request: ControlRequest, sessionId: String, origin: RequestOrigin, connection: any OutboundConnection) -> Bool {
        guard let session = session(sessionId) else { return false }
        let clock = ContinuousClock.now
        session.run(registering: connection, expectingReply: origin.isHTTP) { m, now in m.control(request, origin: origin, now: now) }
        metrics.requestHandled("control", operation: request.operation.opName, nanoseconds: Self.nanoseconds(since: clock))
        return true
    }

    func message(_ request: MessageRequest, sessionId: String, origin: RequestOrigin, connection: any OutboundConnection) -> Bool {
        guard let session = session(sessionId) else { return false }
        let clock = ContinuousClock.now
        session.run(registering: connection, expectingReply: origin.isHTTP) { m, now in m.message(request, origin: origin, now: now) }
        metrics.requestHandled("msg", nanoseconds: Self.nanoseconds(since: clock))
        return true
    }

    func heartbeat(sessionId: String, origin: RequestOrigin, connection: any OutboundConnection) -> Bool {
        guard let session = session(sessionId) else { return false }
        let clock = ContinuousClock.now
        session.run(registering: connection, expectingReply: origin.isHTTP) { m, now in m.heartbeat(origin: origin, now: now) }
        metrics.requestHandled("heartbeat", nanoseconds: Self.nanoseconds(since: clock))
        return true
    }

    /// Nanoseconds from `start` to now (saturating).
    static func nanoseconds(since start: ContinuousClock.Instant) -> Int64 {
        let d = ContinuousClock.now - start
        let (s, a) = d.components
        let (n, overflow) = s.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : n.addingReportingOverflow(a / 1_000_000_000).partialValue
    }

    func connectionClosed(_ conn: ConnectionID, sessionIds: some Sequence<String>) {
        for id in Set(sessionIds) {
            session(id)?.connectionClosed(conn)
        }
    }

    func sessionClosed(_ session: ServerSession, reason: SessionCloseReason) {
        let (removed, noneLeft) = sessions.withLockedValue { s in (s.removeValue(forKey: session.id) != nil, s.isEmpty) }
        guard removed else { return }
        if noneLeft { noSessionLeft.signal() }
        occupancy.withLockedValue { $0.release(address: session.clientAddress) }
        metrics.update {
            $0.sessionsActive -= 1
            if reason == .backlogExceeded { $0.sessionsClosedForBacklog += 1 }
        }
        session.adapterSet.metadata.notifySessionClose(sessionId: session.id)
        mpn?.sessionClosed(sessionId: session.id)
        trimmer.sessionsClosed()
        session.log(.info, "session closed", metadata: ["reason": "\(String(describing: reason).logEscaped())"])
    }

    /// Ends every session with END 32 (server shutdown).
    func closeAll(code: Int = 32, message: String = "Server shutting down") {
        let all = sessions.withLockedValue { Array($0.values) }
        for s in all {
            s.run { m, now in m.serverClose(code: code, message: message, now: now) }
        }
    }
}

extension RequestOrigin {
    var isHTTP: Bool { if case .http = self { true } else { false } }
}
