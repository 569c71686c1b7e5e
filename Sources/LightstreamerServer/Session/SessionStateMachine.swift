import TLCP

/// One server session, without I/O (docs/protocol/TLCP.md §5). Each event method takes the current
/// time in milliseconds (any monotonic origin) and returns the actions to run, in order.
///
/// The machine numbers every data notification (§5.5), keeps them in a `NotificationLog` until
/// delivered and for the recovery window after, and writes them on the bound stream when the
/// content length and the bandwidth limit allow. Controls, messages and heartbeats may come on
/// any connection; their replies go back where they came from (`RequestOrigin`).
public struct SessionStateMachine: Sendable {
    /// The stream connection the session is bound to.
    struct Binding: Sendable {
        var connection: ConnectionID
        var transport: TransportKind
        var polling: Bool
        /// Byte budget (nil: none).
        var contentLength: Int?
        var bytesWritten = 0
        var keepaliveMillis: Int
        var idleMillis: Int
        var pollingMillis: Int
        var sendSync: Bool
        var inactivityMillis: Int?
        var boundAt: Int64
        var lastWriteAt: Int64
        /// A poll that has sent nothing yet and waits for data.
        var pollWaiting = false
    }

    enum Phase: Sendable {
        /// Waiting for the control parts of a create+control combo.
        case creating
        case active
        case closed
    }

    /// What a create needs to finish once its combo parts are done.
    struct PendingCreate: Sendable {
        var connection: ConnectionID
        var transport: TransportKind
        var stream: StreamParameters
        var clientIP: String?
        var outstanding = 0
        var failure: SessionRefusal?
        var connectionClosed = false
    }

    /// The session's id, as sent in `CONOK`.
    public let sessionId: String
    /// The TLCP version the client asked for.
    public let version: TLCPVersion
    /// Shared by the sessions of one manager: one copy of the ~300 bytes for all of them.
    let sharedSettings: SharedSessionSettings
    var settings: SessionSettings { sharedSettings.value }
    let diffs: Set<DiffFormat>
    /// `LS_reduce_head` on create: no CONS for the whole session.
    let reduceHeadSession: Bool
    /// The Metadata Adapter's bandwidth limit for the user (kbps).
    let allowedMaxBandwidth: Double?

    var phase: Phase = .creating
    var pendingCreate: PendingCreate?
    var binding: Binding?
    var clientIP: String?
    var requestedBandwidth: RequestedBandwidth?
    var limiter = BandwidthLimiter()
    var log = NotificationLog()
    /// The last progressive written on a stream.
    var delivered = 0
    var tables: [Int: SessionTable] = [:]
    var sequences: [String: MessageSequenceState] = [:]
    var pendingMessages: [Int: PendingMessage] = [:]
    var nextMessageId = 1
    /// Messages waiting in `sequences` for a missing progressive (all sequences together).
    var queuedMessageCount = 0
    /// Boxed (nil until the first MPN request): most sessions never use MPN, and its state
    /// is ~240 bytes inline.
    private var mpnBox: SessionMPNStateBox?
    var mpn: SessionMPNState {
        get { mpnBox?.value ?? SessionMPNState() }
        set { mpnBox = SessionMPNStateBox(newValue) }
    }
    var lastClientActivity: Int64
    var output = Output()

    /// Actions gathered while one event is handled; consecutive writes to one connection merge.
    struct Output: Sendable {
        var actions: [SessionAction] = []

        mutating func write(_ text: String, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) { $0 += text }
        }

        /// `write(line + "\r\n")` without building that string first.
        mutating func writeLine(_ line: String, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) { $0 += line; $0 += "\r\n" }
        }

        /// `writeLine` for a line held by the `NotificationLog`.
        mutating func writeLine(_ line: Substring, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) { $0.append(contentsOf: line); $0 += "\r\n" }
        }

        /// Extends the last write when it goes to `conn`, else starts a new one.
        private mutating func append(to conn: ConnectionID, updates: Int, _ body: (inout String) -> Void) {
            if case .write(let c, var t, let u)? = actions.last, c == conn {
                // Drop the array's copy first so that `t` is unique and grows in place.
                actions.removeLast()
                body(&t)
                actions.append(.write(c, t, updates: u + updates))
            } else {
                var t = ""
                body(&t)
                actions.append(.write(conn, t, updates: updates))
            }
        }

        mutating func take() -> [SessionAction] {
            defer { actions = [] }
            return actions
        }
    }

    /// A session just accepted by the Metadata Adapter. Call `start(now:)` next.
    public init(sessionId: String, version: TLCPVersion, create: CreateSessionRequest, connection: ConnectionID,
                transport: TransportKind, clientIP: String?, allowedMaxBandwidth: Double?,
                settings: SessionSettings, now: Int64) {
        self.init(sessionId: sessionId, version: version, create: create, connection: connection, transport: transport,
                  clientIP: clientIP, allowedMaxBandwidth: allowedMaxBandwidth,
                  sharedSettings: SharedSessionSettings(settings), now: now)
    }

    /// The same, with settings shared with other sessions.
    init(sessionId: String, version: TLCPVersion, create: CreateSessionRequest, connection: ConnectionID,
         transport: TransportKind, clientIP: String?, allowedMaxBandwidth: Double?,
         sharedSettings: SharedSessionSettings, now: Int64) {
        self.sessionId = sessionId
        self.version = version
        self.sharedSettings = sharedSettings
        if version.supports(.diffs) {
            self.diffs = Set(create.supportedDiffs ?? DiffFormat.allCases)
        } else {
            self.diffs = []
        }
        self.reduceHeadSession = version.supports(.reduceHead) && create.stream.reduceHead == true
        self.allowedMaxBandwidth = allowedMaxBandwidth
        self.requestedBandwidth = create.requestedMaxBandwidth
        self.clientIP = clientIP
        self.lastClientActivity = now
        self.pendingCreate = PendingCreate(connection: connection, transport: transport, stream: create.stream,
                                           clientIP: clientIP)
        self.comboOperations = create.comboOperations
    }

    var comboOperations: [ControlOperation]

    /// Whether the session has ended.
    public var isClosed: Bool { if case .closed = phase { return true } else { return false } }
    /// Whether a stream (or poll) is currently bound to the session.
    public var isBound: Bool { binding != nil }
    /// The connection of the bound stream, if any.
    public var boundConnection: ConnectionID? { binding?.connection }
    /// Data notifications produced so far.
    public var dataNotificationCount: Int { log.lastProgressive }
    /// Subscriptions the engine has accepted and that are not closed.
    public var activeSubscriptionCount: Int { tables.values.filter { if case .active = $0.state { true } else { false } }.count }

    // MARK: - Create

    /// Runs the combo controls of the create, or binds the first stream at once.
    public mutating func start(now: Int64) -> [SessionAction] {
        limiter.setLimit(kbps: grantedBandwidthKbps, now: now)
        let ops = comboOperations
        comboOperations = []
        for op in ops {
            switch op {
            case .add(let p):
                guard tables[p.subscriptionId] == nil else {
                    pendingCreate?.failure = SessionRefusal(code: 64, message: "Duplicate subscription id")
                    continue
                }
                guard tables.count < settings.maxSubscriptionsPerSession else {
                    pendingCreate?.failure = SessionRefusal(code: 64, message: "Too many subscriptions")
                    continue
                }
                tables[p.subscriptionId] = SessionTable(parameters: p, origin: .combo, requestId: nil, ack: false)
                pendingCreate?.outstanding += 1
                output.actions.append(.subscribe(subscriptionId: p.subscriptionId, p))
            case .constrain(let bw):
                requestedBandwidth = bw
                limiter.setLimit(kbps: grantedBandwidthKbps, now: now)
            default:
                pendingCreate?.failure = SessionRefusal(code: 64, message: "Operation \(op.opName) not allowed with create")
            }
        }
        completeCreateIfReady(now: now)
        return output.take()
    }

    mutating func completeCreateIfReady(now: Int64) {
        guard case .creating = phase, let pending = pendingCreate, pending.outstanding == 0 else { return }
        pendingCreate = nil
        if let failure = pending.failure {
            let line = TLCPNotification.conerr(code: 64, message: failure.message).encodedLine(version: version)
            output.write(line, to: pending.connection, updates: 0)
            output.actions.append(.endStream(pending.connection, closeSocket: false))
            phase = .active
            close(reason: .comboFailed, now: now)
            return
        }
        phase = .active
        if pending.connectionClosed {
            unbind(clean: false, now: now)
            return
        }
        bindStream(connection: pending.connection, transport: pending.transport, stream: pending.stream,
                   recoveryFrom: nil, sendConok: true, sendHead: !(pending.stream.reduceHead == true && version.supports(.reduceHead)),
                   now: now)
    }

    // MARK: - Bind

    /// `bind_session` on `connection`. `version` is the one the request declared.
    public mutating func bind(_ request: BindSessionRequest, connection: ConnectionID, transport: TransportKind,
                              version requestVersion: TLCPVersion, clientIP: String?, now: Int64) -> [SessionAction] {
        lastClientActivity = now
        func refuse(_ code: Int, _ message: String) -> [SessionAction] {
            output.write(TLCPNotification.conerr(code: code, message: message).encodedLine(version: version), to: connection, updates: 0)
            output.actions.append(.endStream(connection, closeSocket: false))
            return output.take()
        }
        guard case .active = phase else { return refuse(20, "Session not found") }
        guard requestVersion.major == version.major, requestVersion.minor == version.minor else {
            return refuse(3, "Session created with \(version.protocolName)")
        }
        if let from = request.recoveryFrom, !log.holdsEverything(after: from) {
            return refuse(4, "Recovery not possible from \(from)")
        }
        if let old = binding {
            // Another connection takes the session over: the old stream ends silently.
            unbind(clean: true, now: now, armTimeout: false)
            output.actions.append(.endStream(old.connection, closeSocket: true))
        }
        if let clientIP { self.clientIP = clientIP }
        let reduce = request.stream.reduceHead == true && version.supports(.reduceHead)
        bindStream(connection: connection, transport: transport, stream: request.stream, recoveryFrom: request.recoveryFrom,
                   sendConok: !reduce, sendHead: !reduce, now: now)
        return output.take()
    }

    mutating func bindStream(connection: ConnectionID, transport: TransportKind, stream: StreamParameters,
                             recoveryFrom: Int?, sendConok: Bool, sendHead: Bool, now: Int64) {
        output.actions.append(.cancelTimer(.unboundTimeout))
        wroteDataSinceBind = false
        let polling = stream.polling
        let keepalive = min(max(stream.keepaliveMillis ?? settings.defaultKeepaliveMillis, settings.minKeepaliveMillis),
                            settings.maxKeepaliveMillis)
        let idle = min(stream.idleMillis ?? 0, settings.maxIdleMillis)
        var contentLength: Int?
        if let requested = stream.contentLength, requested >= settings.minContentLength {
            contentLength = min(requested, settings.maxContentLength)
        } else if transport == .http && !polling {
            contentLength = settings.defaultContentLength
        }
        lastStreamConnection = connection
        binding = Binding(connection: connection, transport: transport, polling: polling, contentLength: contentLength,
                          keepaliveMillis: keepalive, idleMillis: idle,
                          pollingMillis: min(stream.pollingMillis ?? 0, settings.maxPollingMillis),
                          sendSync: !polling && stream.sendSync != false,
                          inactivityMillis: polling ? nil : stream.inactivityMillis.flatMap { $0 > 0 ? min($0, settings.maxInactivityMillis) : nil },
                          boundAt: now, lastWriteAt: now)
        if sendConok {
            writeStream(.conok(sessionId: sessionId, requestLimit: settings.requestLimit,
                               keepaliveMillis: polling ? idle : keepalive, controlLink: settings.controlLink), now: now)
        }
        if sendHead {
            writeStream(.servname(settings.announcedServerName), now: now)
            if let clientIP { writeStream(.clientip(clientIP), now: now) }
        }
        if !reduceHeadSession {
            writeStream(.cons(grantedBandwidth), now: now)
        }
        if let from = recoveryFrom {
            delivered = from
            writeStream(.prog(from), now: now)
        }
        flushData(now: now)
        guard let b = binding else { return }
        if b.polling {
            if delivered < log.lastProgressive || b.idleMillis == 0 || wroteDataSinceBind {
                endPoll(now: now)
            } else {
                binding?.pollWaiting = true
                output.actions.append(.armTimer(.pollIdle, atMillis: Saturating.deadline(now, plus: b.idleMillis)))
            }
        } else {
            output.actions.append(.armTimer(.keepalive, atMillis: Saturating.deadline(now, plus: b.keepaliveMillis)))
            if b.sendSync {
                output.actions.append(.armTimer(.sync, atMillis: Saturating.deadline(now, plus: settings.syncIntervalMillis)))
            }
            if let inactivity = b.inactivityMillis {
                output.actions.append(.armTimer(.inactivity, atMillis: Saturating.deadline(now, plus: inactivityLimit(inactivity))))
            }
        }
        wroteDataSinceBind = false
    }

    var wroteDataSinceBind = false
    /// The connection of the latest stream or poll.
    var lastStreamConnection: ConnectionID?

    func inactivityLimit(_ millis: Int) -> Int { Saturating.add(millis, max(millis, 2_000)) }

    /// The stream ends. `clean`: after LOOP (the client got everything and will rebind);
    /// otherwise the connection dropped and the client may come back with recovery.
    mutating func unbind(clean: Bool, now: Int64, armTimeout: Bool = true) {
        let polling = binding?.pollingMillis ?? 0
        binding = nil
        for t in [SessionTimer.keepalive, .sync, .pollIdle, .pollFlush, .bandwidth, .inactivity] {
            output.actions.append(.cancelTimer(t))
        }
        guard armTimeout else { return }
        let wait = clean ? settings.sessionTimeoutMillis + polling : max(settings.sessionRecoveryMillis, settings.sessionTimeoutMillis)
        output.actions.append(.armTimer(.unboundTimeout, atMillis: Saturating.deadline(now, plus: wait)))
    }

    /// Ends a poll (or a stream whose content length ran out) with LOOP.
    mutating func endPoll(now: Int64) {
        guard let b = binding else { return }
        writeStream(.loop(delayMillis: b.polling ? b.pollingMillis : 0), now: now)
        output.actions.append(.endStream(b.connection, closeSocket: false))
        unbind(clean: true, now: now)
    }

    // MARK: - Writing

    var grantedBandwidthKbps: Double? {
        var kbps: Double?
        if case .kbps(let k)? = requestedBandwidth { kbps = k }
        if let allowed = allowedMaxBandwidth { kbps = min(kbps ?? allowed, allowed) }
        return kbps
    }

    var grantedBandwidth: BandwidthConstraint {
        grantedBandwidthKbps.map { .kbps($0) } ?? .unlimited
    }

    /// Writes a line on a connection; on the bound stream it counts toward content length and
    /// keepalive.
    mutating func write(_ line: String, to conn: ConnectionID, isUpdate: Bool = false, now: Int64) {
        noteWrite(bytes: line.utf8.count + 2, to: conn, now: now)
        output.writeLine(line, to: conn, updates: isUpdate ? 1 : 0)
    }

    /// `write` for a line held by the `NotificationLog`.
    mutating func write(_ line: Substring, to conn: ConnectionID, isUpdate: Bool, now: Int64) {
        noteWrite(bytes: line.utf8.count + 2, to: conn, now: now)
        output.writeLine(line, to: conn, updates: isUpdate ? 1 : 0)
    }

    private mutating func noteWrite(bytes: Int, to conn: ConnectionID, now: Int64) {
        if binding?.connection == conn {
            binding?.bytesWritten += bytes
            binding?.lastWriteAt = now
        }
    }

    /// Writes a non-data line on the bound stream, if any.
    mutating func writeStream(_ n: TLCPNotification, now: Int64) {
        guard let b = binding else { return }
        write(n.encoded(version: version), to: b.connection, now: now)
    }

    /// Adds a data notification and delivers it if a stream can take it.
    mutating func emitData(_ n: TLCPNotification, now: Int64) {
        var isUpdate = false
        if case .update = n { isUpdate = true }
        emitLine(n.encoded(version: version), isUpdate: isUpdate, now: now)
    }

    /// `emitData` for a line already encoded.
    mutating func emitLine(_ line: String, isUpdate: Bool, now: Int64) {
        _ = log.append(line, isUpdate: isUpdate, now: now)
        if log.heldBytes > settings.maxBacklogBytes {
            // Recovery gives way first; past that the client cannot keep up.
            log.dropDelivered(delivered)
            if log.heldBytes > settings.maxBacklogBytes {
                closeForBacklog(now: now)
                return
            }
        }
        guard let b = binding else {
            if log.lastProgressive - delivered > settings.maxPendingNotifications {
                close(reason: .error(code: 33, message: "Too much data for an unbound session"), now: now)
            }
            return
        }
        if b.pollWaiting {
            if settings.pollCoalesceMillis <= 0 {
                flushData(now: now)
                endPoll(now: now)
            } else if log.lastProgressive == delivered + 1 {
                output.actions.append(.armTimer(.pollFlush, atMillis: Saturating.deadline(now, plus: settings.pollCoalesceMillis)))
            }
            return
        }
        flushData(now: now)
    }

    /// Writes held data notifications on the bound stream, within the content length and
    /// bandwidth limits.
    mutating func flushData(now: Int64) {
        defer {
            log.prune(delivered: delivered, now: now, windowMillis: settings.recoveryWindowMillis,
                      maxCount: settings.recoveryMaxNotifications)
        }
        while let b = binding, delivered < log.lastProgressive {
            guard let entry = log.entry(delivered + 1) else { break }
            let bytes = entry.line.utf8.count + 2
            if let limit = b.contentLength, b.bytesWritten + bytes + 16 > limit {
                endPoll(now: now)
                return
            }
            if let retry = limiter.consume(bytes, now: now) {
                output.actions.append(.armTimer(.bandwidth, atMillis: retry))
                return
            }
            write(entry.line, to: b.connection, isUpdate: entry.isUpdate, now: now)
            delivered += 1
            wroteDataSinceBind = true
        }
    }

    // MARK: - Timers and connections

    /// A timer the session armed fired; returns what to do.
    public mutating func timerFired(_ timer: SessionTimer, now: Int64) -> [SessionAction] {
        switch timer {
        case .keepalive:
            if let b = binding, !b.polling {
                if now - b.lastWriteAt >= Int64(b.keepaliveMillis) {
                    writeStream(.probe, now: now)
                }
                if let b = binding {
                    output.actions.append(.armTimer(.keepalive, atMillis: Saturating.deadline(b.lastWriteAt, plus: b.keepaliveMillis)))
                }
            }
        case .sync:
            if let b = binding, b.sendSync {
                writeStream(.sync(seconds: Int((now - b.boundAt) / 1000)), now: now)
                output.actions.append(.armTimer(.sync, atMillis: Saturating.deadline(now, plus: settings.syncIntervalMillis)))
            }
        case .pollIdle, .pollFlush:
            if let b = binding, b.polling {
                flushData(now: now)
                endPoll(now: now)
            }
        case .unboundTimeout:
            if binding == nil, case .active = phase {
                close(reason: .timedOut, now: now)
            }
        case .bandwidth:
            if binding != nil { flushData(now: now) }
        case .inactivity:
            if let b = binding, let millis = b.inactivityMillis {
                let limit = Int64(inactivityLimit(millis))
                if now - lastClientActivity >= limit {
                    output.actions.append(.endStream(b.connection, closeSocket: true))
                    unbind(clean: false, now: now)
                } else {
                    output.actions.append(.armTimer(.inactivity, atMillis: Saturating.add(lastClientActivity, limit)))
                }
            }
        case .messageWait(let sequence):
            messageWaitExpired(sequence: sequence, now: now)
        }
        return output.take()
    }

    /// A connection went away (the client closed it, or it failed).
    public mutating func connectionClosed(_ conn: ConnectionID, now: Int64) -> [SessionAction] {
        if pendingCreate?.connection == conn {
            pendingCreate?.connectionClosed = true
        }
        if binding?.connection == conn {
            unbind(clean: false, now: now)
        } else if binding == nil, lastStreamConnection == conn, case .active = phase {
            // The socket of the last poll dropped between polls: the client may come back with
            // recovery, so the session waits as long as after an unexpected drop.
            let wait = max(settings.sessionRecoveryMillis, settings.sessionTimeoutMillis)
            output.actions.append(.armTimer(.unboundTimeout, atMillis: Saturating.deadline(now, plus: wait)))
        }
        return output.take()
    }

    /// Closes the session from the server side (shutdown, administrator): `END` on the stream.
    public mutating func serverClose(code: Int, message: String, now: Int64) -> [SessionAction] {
        guard !isClosed else { return [] }
        if let b = binding {
            writeStream(.end(code: code, message: message), now: now)
            output.actions.append(.endStream(b.connection, closeSocket: b.transport == .http))
            unbind(clean: true, now: now, armTimeout: false)
        }
        close(reason: .serverShutdown, now: now)
        return output.take()
    }

    /// The session holds more undelivered data than `maxBacklogBytes`: END 32 on its stream, if
    /// it has one, and closed.
    mutating func closeForBacklog(now: Int64) {
        if let b = binding {
            let message = "Client too slow: more than \(settings.maxBacklogBytes) bytes undelivered"
            // Written past the bandwidth and content-length checks: it is the last line.
            write(TLCPNotification.end(code: 32, message: message).encoded(version: version), to: b.connection, now: now)
            output.actions.append(.endStream(b.connection, closeSocket: true))
        }
        close(reason: .backlogExceeded, now: now)
    }

    mutating func close(reason: SessionCloseReason, now: Int64) {
        guard !isClosed else { return }
        if binding != nil { unbind(clean: true, now: now, armTimeout: false) }
        phase = .closed
        for id in tables.keys.sorted() {
            if let t = tables[id], case .subscribing = t.state { continue }
            output.actions.append(.unsubscribe(subscriptionId: id))
        }
        for name in sequences.keys.sorted() { output.actions.append(.cancelTimer(.messageWait(sequence: name))) }
        output.actions.append(.cancelTimer(.unboundTimeout))
        output.actions.append(.sessionClosed(reason))
    }
}
