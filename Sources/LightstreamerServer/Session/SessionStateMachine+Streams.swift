import TLCP

/// Creating the session and binding streams (and polls) to it (docs/protocol/TLCP.md §2.1-2.2).
extension SessionStateMachine {
    /// The stream connection the session is bound to.
    struct Binding: Sendable {
        // Eight-byte fields first, then the optionals, then the one-byte ones: in declaration
        // order this struct was 105 bytes with its padding, 85 so, in every bound session.
        var connection: ConnectionID
        var bytesWritten = 0
        var keepaliveMillis: Int
        var idleMillis: Int
        var pollingMillis: Int
        var boundAt: Int64
        var lastWriteAt: Int64
        /// Byte budget (nil: none).
        var contentLength: Int?
        var inactivityMillis: Int?
        var transport: TransportKind
        var polling: Bool
        var sendSync: Bool
        /// A poll that has sent nothing yet and waits for data.
        var pollWaiting = false
    }

    /// What a create needs to finish once its combo parts are done.
    struct PendingCreate: Sendable {
        var connection: ConnectionID
        var transport: TransportKind
        var stream: StreamParameters
        var clientIP: String?
        /// The control parts of the combo, run by `start(now:)`.
        var comboOperations: [ControlOperation]
        /// Combo subscriptions not answered yet.
        var outstanding = 0
        var failure: SessionRefusal?
        /// The connection of the create went away before the create finished.
        var connectionClosed = false
    }

    // MARK: - Create

    /// Runs the combo controls of the create, or binds the first stream at once.
    public mutating func start(now: Int64) -> [Action] {
        // A session without a limit leaves its limiter as made (and out of line).
        if let kbps = grantedBandwidthKbps { limiter.setLimit(kbps: kbps, now: now) }
        var ops: [ControlOperation] = []
        modifyPendingCreate { pending in
            ops = pending.comboOperations
            pending.comboOperations = []
        }
        for op in ops {
            switch op {
            case .add(let p):
                guard tables[p.subscriptionId] == nil else {
                    modifyPendingCreate { $0.failure = SessionRefusal(code: 64, message: "Duplicate subscription id") }
                    continue
                }
                guard tables.count < settings.maxSubscriptionsPerSession else {
                    modifyPendingCreate { $0.failure = SessionRefusal(code: 64, message: "Too many subscriptions") }
                    continue
                }
                tables[p.subscriptionId] = SessionTable(parameters: p, origin: .combo, requestId: nil, ack: false)
                modifyPendingCreate { $0.outstanding += 1 }
                output.actions.append(.subscribe(subscriptionId: p.subscriptionId, p))
            case .constrain(let bw):
                requestedBandwidth = bw
                limiter.setLimit(kbps: grantedBandwidthKbps, now: now)
            default:
                modifyPendingCreate { $0.failure = SessionRefusal(code: 64, message: "Operation \(op.opName) not allowed with create") }
            }
        }
        completeCreateIfReady(now: now)
        return output.take()
    }

    mutating func completeCreateIfReady(now: Int64) {
        guard let waiting = pendingCreate, waiting.outstanding == 0, let pending = finishCreate() else { return }
        if let failure = pending.failure {
            let line = TLCPNotification.conerr(code: 64, message: failure.message).encodedLine(version: version)
            output.write(line, to: pending.connection, updates: 0)
            output.actions.append(.endStream(pending.connection, closeSocket: false))
            close(reason: .comboFailed, now: now)
            return
        }
        if pending.connectionClosed {
            unbind(clean: false, now: now)
            return
        }
        bindStream(
            connection: pending.connection, transport: pending.transport, stream: pending.stream,
            recoveryFrom: nil, sendConok: true, sendHead: !(pending.stream.reduceHead == true && version.supports(.reduceHead)),
            now: now)
    }

    // MARK: - Bind

    /// `bind_session` on `connection`. `version` is the one the request declared.
    public mutating func bind(
        _ request: BindSessionRequest, connection: ConnectionID, transport: TransportKind,
        version requestVersion: TLCPVersion, clientIP: String?, now: Int64
    ) -> [Action] {
        lastClientActivity = now
        func refuse(_ code: Int, _ message: String) -> [Action] {
            output.write(TLCPNotification.conerr(code: code, message: message).encodedLine(version: version), to: connection, updates: 0)
            output.actions.append(.endStream(connection, closeSocket: false))
            return output.take()
        }
        guard isActive else { return refuse(20, "Session not found") }
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
        bindStream(
            connection: connection, transport: transport, stream: request.stream, recoveryFrom: request.recoveryFrom,
            sendConok: !reduce, sendHead: !reduce, now: now)
        return output.take()
    }

    mutating func bindStream(
        connection: ConnectionID, transport: TransportKind, stream: StreamParameters,
        recoveryFrom: Int?, sendConok: Bool, sendHead: Bool, now: Int64
    ) {
        output.actions.append(.cancelTimer(.unboundTimeout))
        // Before the binding: the held rows go into the log, sent below after the stream's head.
        releaseAllHeld(now: now)
        wroteDataSinceBind = false
        let polling = stream.polling
        let keepalive = min(
            max(stream.keepaliveMillis ?? settings.defaultKeepaliveMillis, settings.minKeepaliveMillis),
            settings.maxKeepaliveMillis)
        let idle = min(stream.idleMillis ?? 0, settings.maxIdleMillis)
        var contentLength: Int?
        if let requested = stream.contentLength, requested >= settings.minContentLength {
            contentLength = min(requested, settings.maxContentLength)
        } else if transport == .http && !polling {
            contentLength = settings.defaultContentLength
        }
        lastStreamConnection = connection
        setBinding(
            Binding(
                connection: connection, keepaliveMillis: keepalive, idleMillis: idle,
                pollingMillis: min(stream.pollingMillis ?? 0, settings.maxPollingMillis),
                boundAt: now, lastWriteAt: now, contentLength: contentLength,
                inactivityMillis: polling ? nil : stream.inactivityMillis.flatMap { $0 > 0 ? min($0, settings.maxInactivityMillis) : nil },
                transport: transport, polling: polling, sendSync: !polling && stream.sendSync != false))
        if sendConok {
            writeStream(
                .conok(
                    sessionId: sessionId, requestLimit: settings.requestLimit,
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
                modifyBinding { $0.pollWaiting = true }
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

    func inactivityLimit(_ millis: Int) -> Int { Saturating.add(millis, max(millis, 2_000)) }

    /// The stream ends. `clean`: after LOOP (the client got everything and will rebind);
    /// otherwise the connection dropped and the client may come back with recovery.
    mutating func unbind(clean: Bool, now: Int64, armTimeout: Bool = true) {
        let polling = binding?.pollingMillis ?? 0
        setBinding(nil)
        for t in [Timer.keepalive, .sync, .pollIdle, .pollFlush, .bandwidth, .inactivity] {
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
}
