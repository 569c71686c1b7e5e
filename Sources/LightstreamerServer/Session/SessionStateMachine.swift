import TLCP

/// One server session, without I/O (docs/protocol/TLCP.md §5). Each event method takes the current
/// time in milliseconds (any monotonic origin) and returns the actions to run, in order.
///
/// The machine numbers every data notification (§5.5), keeps them in a `NotificationLog` until
/// delivered and for the recovery window after, and writes them on the bound stream when the
/// content length and the bandwidth limit allow. Controls, messages and heartbeats may come on
/// any connection; their replies go back where they came from (`RequestOrigin`).
public struct SessionStateMachine: Sendable {
    /// Where the session is in its life, with what only that stage has: a create still running
    /// its combo controls, an open session with or without a stream, or an ended one.
    private enum State: Sendable {
        /// Waiting for the control parts of a create+control combo. `indirect`: the pending
        /// create (about 170 bytes) lives in a box for that short while, instead of every
        /// session's state keeping room for it for the session's whole life.
        indirect case creating(PendingCreate)
        /// Open; `streamBinding` is the stream (or poll) the session writes on, if there is one.
        case active
        case closed
    }

    // MARK: - Fixed at creation

    /// The session's id, as sent in `CONOK`.
    public let sessionId: String
    /// The TLCP version the client asked for.
    public let version: TLCPVersion
    /// The diff formats the client accepts (`LS_supported_diffs`), as `SharedUpdateEncoding`
    /// compares them; `diffs` is the same as a set.
    let diffMask: UInt8
    /// `LS_reduce_head` on create: no CONS for the whole session.
    let reduceHeadSession: Bool
    /// Shared by the sessions of one manager: one copy of the ~300 bytes for all of them.
    let sharedSettings: SharedSessionSettings

    // MARK: - Lifecycle and streams

    private var state: State
    /// The bound stream: set only while `state` is `active` (the accessors below keep it so).
    /// Kept beside the enum rather than in its `active` case: every line written reads it and
    /// updates its byte count, and taking it out of the enum and putting it back cost some 250
    /// instructions per line.
    private var streamBinding: Binding?
    /// Data notifications were written since the latest bind.
    var wroteDataSinceBind = false
    /// A batch of engine events is being handled (`tableEvents`): the log is pruned once at
    /// its end rather than after every line written.
    var inBatch = false
    /// Some table holds a row (`SessionTable.held`): a bind has rows to put in the log.
    var holdsRows = false
    /// Lines of the batch being handled wait in the log to go out together when it ends
    /// (`endBatch`), as one run per log page rather than one line at a time.
    var flushDeferred = false
    /// The connection of the latest stream or poll.
    var lastStreamConnection: ConnectionID?
    var clientIP: String?
    var lastClientActivity: Int64

    // MARK: - Data and bandwidth

    var log = NotificationLog()
    /// The last progressive written on a stream.
    var delivered = 0
    /// MERGE updates replaced by a newer one while the session had no stream, since the last
    /// `takeFoldedCount()` (`SessionStateMachine+Held.swift`).
    var foldedWhileUnbound = 0
    var tables: [Int: SessionTable] = [:]

    // MARK: - Messages and MPN

    /// Bandwidth limit and messages, out of line until a session uses them.
    private var rare = SessionRareStorage()
    /// Boxed (nil until the first MPN request): most sessions never use MPN, and its state
    /// is ~240 bytes inline.
    private var mpnBox: SessionMPNStateBox?

    // MARK: - Output of the event being handled

    var output = Output()

    /// Every set of diff formats a session can have, made once: sessions share one of them
    /// instead of each holding its own (a set's storage is some 70 bytes per idle session).
    private static let diffSets: [Set<DiffFormat>] = [[], [.jsonPatch], [.tlcpDiff], [.jsonPatch, .tlcpDiff]]

    /// `diffMask` as a set (`diffSet(mask:)`).
    var diffs: Set<DiffFormat> { Self.diffSet(mask: diffMask) }

    /// The set of diff formats of `mask` (`SharedUpdateEncoding.mask`): the shared one of
    /// `diffSets`, which are in the order of their masks (bit 0 JSON Patch, bit 1 TLCP-diff).
    static func diffSet(mask: UInt8) -> Set<DiffFormat> { diffSets[Int(mask & 3)] }

    /// A session just accepted by the Metadata Adapter. Call `start(now:)` next.
    public init(
        sessionId: String, version: TLCPVersion, create: CreateSessionRequest, connection: ConnectionID,
        transport: TransportKind, clientIP: String?, allowedMaxBandwidth: Double?,
        settings: SessionSettings, now: Int64
    ) {
        self.init(
            sessionId: sessionId, version: version, create: create, connection: connection, transport: transport,
            clientIP: clientIP, allowedMaxBandwidth: allowedMaxBandwidth,
            sharedSettings: SharedSessionSettings(settings), now: now)
    }

    /// The same, with settings shared with other sessions.
    init(
        sessionId: String, version: TLCPVersion, create: CreateSessionRequest, connection: ConnectionID,
        transport: TransportKind, clientIP: String?, allowedMaxBandwidth: Double?,
        sharedSettings: SharedSessionSettings, now: Int64
    ) {
        self.sessionId = sessionId
        self.version = version
        self.sharedSettings = sharedSettings
        self.diffMask =
            version.supports(.diffs) ? SharedUpdateEncoding.mask(Set(create.supportedDiffs ?? DiffFormat.allCases)) : 0
        self.reduceHeadSession = version.supports(.reduceHead) && create.stream.reduceHead == true
        if allowedMaxBandwidth != nil { self.rare.value.allowedMaxBandwidth = allowedMaxBandwidth }
        if let requested = create.requestedMaxBandwidth { self.rare.value.requestedBandwidth = requested }
        self.clientIP = clientIP
        self.lastClientActivity = now
        self.state = .creating(
            PendingCreate(
                connection: connection, transport: transport, stream: create.stream,
                clientIP: clientIP, comboOperations: create.comboOperations))
    }

    var settings: SessionSettings { sharedSettings.value }

    // MARK: - Out of line (`SessionRareState`)

    var requestedBandwidth: RequestedBandwidth? {
        get { rare.value.requestedBandwidth }
        set { rare.value.requestedBandwidth = newValue }
    }
    var allowedMaxBandwidth: Double? { rare.value.allowedMaxBandwidth }
    /// Whether no bandwidth limit applies (the hot path's view of `limiter`).
    var isBandwidthUnlimited: Bool { rare.isBandwidthUnlimited }
    /// Read without making the box; `_modify` makes it (check `isBandwidthUnlimited` first).
    var limiter: BandwidthLimiter {
        get { rare.value.limiter }
        _modify { yield &rare.value.limiter }
    }
    var sequences: [String: MessageSequenceState] {
        get { rare.value.sequences }
        _modify { yield &rare.value.sequences }
    }
    var pendingMessages: [Int: PendingMessage] {
        get { rare.value.pendingMessages }
        _modify { yield &rare.value.pendingMessages }
    }
    var nextMessageId: Int {
        get { rare.value.nextMessageId }
        set { rare.value.nextMessageId = newValue }
    }
    var queuedMessageCount: Int {
        get { rare.value.queuedMessageCount }
        set { rare.value.queuedMessageCount = newValue }
    }
    /// Whether the out-of-line state was made (tests).
    var hasRareState: Bool { rare.isAllocated }

    var mpn: SessionMPNState {
        get { mpnBox?.value ?? SessionMPNState() }
        set { mpnBox = SessionMPNStateBox(newValue) }
    }

    // MARK: - Public views

    /// Whether the session has ended.
    public var isClosed: Bool { if case .closed = state { true } else { false } }
    /// Whether a stream (or poll) is currently bound to the session.
    public var isBound: Bool { binding != nil }
    /// The connection of the bound stream, if any.
    public var boundConnection: ConnectionID? { binding?.connection }
    /// Data notifications produced so far.
    public var dataNotificationCount: Int { log.lastProgressive }
    /// Subscriptions the engine has accepted and that are not closed.
    public var activeSubscriptionCount: Int { tables.values.filter { if case .active = $0.state { true } else { false } }.count }

    // MARK: - Reading and changing the lifecycle state

    /// Open: the create has finished and the session has not ended.
    var isActive: Bool { if case .active = state { true } else { false } }

    /// The create still running its combo controls, if any.
    var pendingCreate: PendingCreate? { if case .creating(let pending) = state { pending } else { nil } }

    /// The bound stream, if any (only an open session has one).
    var binding: Binding? { streamBinding }
    /// No stream or poll is bound (read without copying the binding).
    var isUnbound: Bool { streamBinding == nil }

    /// Changes the pending create in place; nothing happens once the create has finished.
    mutating func modifyPendingCreate(_ body: (inout PendingCreate) -> Void) {
        guard case .creating(var pending) = state else { return }
        body(&pending)
        state = .creating(pending)
    }

    /// Changes the bound stream in place; nothing happens when there is none.
    mutating func modifyBinding(_ body: (inout Binding) -> Void) {
        guard var binding = streamBinding else { return }
        body(&binding)
        streamBinding = binding
    }

    /// The create is over: the session is open, without a stream yet. Returns what the create
    /// was waiting on (nil if it was not creating).
    mutating func finishCreate() -> PendingCreate? {
        guard case .creating(let pending) = state else { return nil }
        state = .active
        streamBinding = nil
        return pending
    }

    /// Binds a stream, or unbinds with nil. Only an open session takes a stream.
    mutating func setBinding(_ binding: Binding?) {
        guard case .active = state else {
            assert(binding == nil, "a stream bound to a session that is not open")
            return
        }
        streamBinding = binding
    }

    /// The session has ended; whatever stage it was in is gone.
    mutating func enterClosed() {
        state = .closed
        streamBinding = nil
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

    private mutating func noteWrite(bytes: Int, to conn: ConnectionID, now: Int64) {
        // In place (optional chaining on the stored binding), not copied out and back.
        if streamBinding?.connection == conn {
            streamBinding?.bytesWritten += bytes
            streamBinding?.lastWriteAt = now
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
        emitLine(.text(line), isUpdate: isUpdate, now: now)
    }

    /// `emitLine` for a line that may be made of parts (a shared encoding's `U` line).
    mutating func emitLine(_ line: DataLine, isUpdate: Bool, now: Int64) {
        _ = log.append(line, isUpdate: isUpdate, now: now)
        if log.heldBytes > settings.maxBacklogBytes {
            // What is dropped is what was delivered: the lines before this one that wait for
            // the batch's end go out first, as they would have one by one.
            if flushDeferred {
                flushDeferred = false
                flushData(now: now, through: log.lastProgressive - 1)
            }
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
        // In a batch the line waits for the others (`endBatch`): nothing else is written on
        // the stream meanwhile, so the stream carries the same bytes. One difference: when a
        // content length runs out, the stream ends at the batch's end rather than at the line
        // that did not fit, so the batch's later lines wait in the log for the next bind as
        // they are (one by one, the session was unbound for them, and MERGE rows folded).
        if inBatch {
            flushDeferred = true
            return
        }
        flushData(now: now)
    }

    /// Ends a batch of engine events: writes the lines it held back, prunes the log.
    mutating func endBatch(now: Int64) {
        if flushDeferred {
            flushDeferred = false
            flushData(now: now)
        }
        inBatch = false
        pruneLog(now: now)
    }

    /// Writes held data notifications on the bound stream, within the content length and
    /// bandwidth limits. Each line goes out from its page in the log (`NotificationLog.span`),
    /// not from a copy of its own.
    mutating func flushData(now: Int64, through last: Int? = nil) {
        defer { if !inBatch { pruneLog(now: now) } }
        let last = last ?? log.lastProgressive
        // The binding's fields are read and written in place: copying the whole binding out
        // per line cost some 60 instructions per update (Benchmarks/server-callgrind.sh).
        while let connection = streamBinding?.connection, delivered < last {
            if isBandwidthUnlimited {
                // No bandwidth limit: whole runs of lines at once, as many as the content
                // length leaves room for (what `mayWrite` would let through line by line).
                let room = streamBinding?.contentLength.map { $0 - (streamBinding?.bytesWritten ?? 0) - 16 } ?? .max
                guard let run = log.run(after: delivered, maxBytes: room, maxLines: last - delivered) else { break }
                if run.lines > 0 {
                    writeHeld(run.span, lines: run.lines, updates: run.updates, on: connection, now: now)
                    continue
                }
                // The next line does not fit: it ends the poll or the stream below.
            }
            guard let line = log.locate(delivered + 1) else { break }
            guard mayWrite(line.length + 2, now: now) else { return }
            guard let span = log.span(of: line) else { break }
            writeHeld(span, lines: 1, updates: line.isUpdate ? 1 : 0, on: connection, now: now)
        }
    }

    /// Writes the next `lines` held lines (`span`, read from their log page) on the stream.
    private mutating func writeHeld(_ span: LogPage.Span, lines: Int, updates: Int, on connection: ConnectionID, now: Int64) {
        noteWrite(bytes: span.count, to: connection, now: now)
        output.write(span, to: connection, updates: updates)
        delivered += lines
        wroteDataSinceBind = true
    }

    /// Drops the delivered notifications that are out of the recovery window or past its count.
    mutating func pruneLog(now: Int64) {
        log.prune(
            delivered: delivered, now: now, windowMillis: settings.recoveryWindowMillis, maxCount: settings.recoveryMaxNotifications)
    }

    /// Whether `bytes` more may go on the stream now; if not, ends the poll (its content
    /// length is reached) or arms the bandwidth timer.
    private mutating func mayWrite(_ bytes: Int, now: Int64) -> Bool {
        if let limit = streamBinding?.contentLength, (streamBinding?.bytesWritten ?? 0) + bytes + 16 > limit {
            endPoll(now: now)
            return false
        }
        if !isBandwidthUnlimited, let retry = limiter.consume(bytes, now: now) {
            output.actions.append(.armTimer(.bandwidth, atMillis: retry))
            return false
        }
        return true
    }

    // MARK: - Timers and connections

    /// A timer the session armed fired; returns what to do.
    public mutating func timerFired(_ timer: Timer, now: Int64) -> [Action] {
        switch timer {
        case .keepalive:
            if let b = binding, !b.polling {
                if now - b.lastWriteAt >= Int64(b.keepaliveMillis) {
                    writeStream(.probe, now: now)
                    // The log is otherwise pruned as data goes out: a stream with no data
                    // for a while, and one whose session is held behind a full socket
                    // (`ServerSession.outputBlocked`), would keep what it sent last past the
                    // recovery window, for as long as it stays so.
                    pruneLog(now: now)
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
            if binding == nil, isActive {
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
    public mutating func connectionClosed(_ conn: ConnectionID, now: Int64) -> [Action] {
        if pendingCreate?.connection == conn {
            modifyPendingCreate { $0.connectionClosed = true }
        }
        if binding?.connection == conn {
            unbind(clean: false, now: now)
        } else if binding == nil, lastStreamConnection == conn, isActive {
            // The socket of the last poll dropped between polls: the client may come back with
            // recovery, so the session waits as long as after an unexpected drop.
            let wait = max(settings.sessionRecoveryMillis, settings.sessionTimeoutMillis)
            output.actions.append(.armTimer(.unboundTimeout, atMillis: Saturating.deadline(now, plus: wait)))
        }
        return output.take()
    }

    /// Closes the session from the server side (shutdown, administrator): `END` on the stream.
    public mutating func serverClose(code: Int, message: String, now: Int64) -> [Action] {
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

    mutating func close(reason: CloseReason, now: Int64) {
        guard !isClosed else { return }
        if binding != nil { unbind(clean: true, now: now, armTimeout: false) }
        enterClosed()
        for id in tables.keys.sorted() {
            if let t = tables[id], case .subscribing = t.state { continue }
            output.actions.append(.unsubscribe(subscriptionId: id))
        }
        for name in sequences.keys.sorted() { output.actions.append(.cancelTimer(.messageWait(sequence: name))) }
        output.actions.append(.cancelTimer(.unboundTimeout))
        output.actions.append(.sessionClosed(reason))
    }
}
