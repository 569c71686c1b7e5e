import TLCP

/// Server lines: session notifications here, data notifications dispatched to the
/// subscription and message handlers.
extension SessionEngine {
    mutating func lineReceived(_ id: SessionEngine.ConnectionID, _ line: String) {
        guard let role = connections[id] else { return }
        switch role {
        case .httpControl, .httpMessage, .httpHeartbeat, .httpFireAndForget:
            controlResponseLine(line)
        case .webSocket, .httpStream:
            guard let s = stream, s.connection == id else {
                // A WS between binds still carries control replies.
                if role == .webSocket, webSocket?.connection == id { controlResponseLine(line) }
                return
            }
            if line.isEmpty { return }
            streamLine(line)
        }
    }

    /// Lines on a control/msg/heartbeat response: only replies matter.
    mutating func controlResponseLine(_ line: String) {
        guard !line.isEmpty, let n = try? TLCPNotification.parse(line) else { return }
        switch n {
        case .reqok(let id): if let id { requestSucceeded(id) }
        case .reqerr(let id, let code, let message): requestFailed(id, code: code, message: message)
        // The server could not read a request: as in the official clients, fatal.
        case .error(let code, let message): errorReceived(code: code, message: message)
        default: break
        }
    }

    mutating func streamLine(_ line: String) {
        // Updates, the bulk of the lines, skip the notification enum (copying and destroying
        // its value cost more than applying the update) and are read in place: their values
        // become bytes of the item's `FieldRow`, not one `String` each.
        let utf8 = line.utf8
        if utf8.count >= 2, utf8.first == UInt8(ascii: "U"), utf8[utf8.index(after: utf8.startIndex)] == UInt8(ascii: ",") {
            var text = line
            text.withUTF8 { updateLine($0) }
            return
        }
        let n: TLCPNotification
        do {
            n = try TLCPNotification.parse(line)
        } catch {
            protocolError(error.message)
            return
        }
        lines.lastDataAt = self.now
        if status == .stalled { streamActivity() }
        if n.isDataNotification {
            if countDataNotification() { dataNotification(n) }
            return
        }
        switch n {
        case .conok(let sid, let limit, let keepalive, let link): conokReceived(sid, limit: limit, keepalive: keepalive, link: link)
        case .conerr(let code, let message): conerrReceived(code: code, message: message)
        case .end(let code, let message): endReceived(code: code, message: message)
        case .loop(let delay): loopReceived(delay: delay)
        case .reqok(let id): if let id { requestSucceeded(id) }
        case .reqerr(let id, let code, let message): requestFailed(id, code: code, message: message)
        case .error(let code, let message):
            if let s = stream, !s.gotConok {
                conerrReceived(code: code, message: message)
            } else {
                errorReceived(code: code, message: message)
            }
        case .prog(let p): progReceived(p)
        case .sync(let seconds): syncReceived(seconds: seconds)
        case .cons(let bw):
            let real: RealMaxBandwidth
            switch bw {
            case .unlimited: real = .unlimited
            case .unmanaged: real = .unmanaged
            case .kbps(let k): real = .limited(ServerNumbers.bandwidth(k))
            }
            if let session, session.realMaxBandwidth != real {
                withSession { $0.realMaxBandwidth = real }
                notify(.property(.realMaxBandwidth(real)))
            }
        case .clientip(let ip): notify(.property(.clientIp(ip)))
        case .servname(let name): notify(.property(.serverSocketName(name)))
        case .wsok, .noop, .probe, .unknown: break
        default: break
        }
    }

    /// A `U` line (its UTF-8 bytes), as `TLCPNotification.parseIfUpdate` would read it.
    mutating func updateLine(_ line: UnsafeBufferPointer<UInt8>) {
        if let error = updateTokens.scan(line) {
            protocolError(error.message)
            return
        }
        // `countDataNotification` notes the line's time (`lastDataAt`).
        if status == .stalled { streamActivity() }
        if countDataNotification() { updateReceived(line: line) }
    }

    /// Counts a data notification of the session (docs/RECOVERY.md) and notes its time: false
    /// when there is no session or when the line repeats one already handled (after a
    /// recovery) and must be skipped.
    mutating func countDataNotification() -> Bool {
        guard hasSession else { return false }
        lines.lastDataAt = now
        if lines.skip > 0 {
            lines.skip -= 1
            return false
        }
        lines.dataCount += 1
        return true
    }

    mutating func dataNotification(_ n: TLCPNotification) {
        switch n {
        case .update(let u):
            // (`streamLine` reads U lines itself; this is the same line through that path.)
            var text = u.encoded()
            text.withUTF8 { line in
                if updateTokens.scan(line) == nil { updateReceived(line: line) }
            }
        case .subok(let id, let items, let fields): subscriptionConfirmed(id, items: items, fields: fields, keyPos: nil, commandPos: nil)
        case .subcmd(let id, let items, let fields, let key, let command):
            subscriptionConfirmed(id, items: items, fields: fields, keyPos: key, commandPos: command)
        case .unsub(let id): unsubscriptionConfirmed(id)
        case .endOfSnapshot(let id, let item): endOfSnapshotReceived(id, item: item)
        case .clearSnapshot(let id, let item): clearSnapshotReceived(id, item: item)
        case .overflow(let id, let item, let lost): overflowReceived(id, item: item, lost: lost)
        case .conf(let id, let freq, _): confReceived(id, frequency: freq)
        case .msgdone(let seq, let prog, let response): messageDone(sequence: seq, progressive: prog, response: response ?? "")
        case .msgfail(let seq, let prog, let code, let message):
            messageFailed(sequence: seq, progressive: prog, code: code, message: message)
        case .mpnreg, .mpnzero, .mpnok, .mpnconf, .mpndel: notify(.mpn(n))
        default: break
        }
    }

    // MARK: session lines

    mutating func conokReceived(_ sid: String, limit: Int, keepalive rawKeepalive: Int, link: String) {
        guard var s = stream, !s.gotConok else { return }
        let now = self.now
        let keepalive = ServerNumbers.millis(rawKeepalive)
        s.gotConok = true
        s.boundAt = now
        s.conokIdleMillis = keepalive
        stream = s
        lines.lastDataAt = now
        if !s.transport.isPolling || s.kind == .create && !s.transport.isWebSocket { cancel(.transport) }
        if s.transport.isWebSocket, var ws = webSocket, ws.connection == s.connection {
            ws.sessionBound = true
            webSocket = ws
        }
        switch s.kind {
        case .create:
            let control = settings.serverInstanceAddressIgnored ? nil : configuredAddress?.applyingControlLink(link)
            let started = Session(
                id: sid, requestLimit: ServerNumbers.requestLimit(limit), keepaliveMillis: keepalive,
                controlAddress: control, stream: s)
            state = .active(started)
            lines = LineCount(lastDataAt: now)
            retry = Retry()
            notify(.property(.sessionId(sid)))
            if let control { notify(.property(.serverInstanceAddress(control.base))) }
            setStatus(s.transport.isWebSocket ? s.transport.connectedStatus : .connectedStreamSensing)
            notify(.sessionStarted(id: sid))
            resubscribeAll()
            // External (MPN) requests queued while there was no session go first.
            flushControls()
            flushMessages()
            armReverseHeartbeat()
            armKeepalive()
        case .bind:
            withSession { $0.keepaliveMillis = keepalive }
            setStatus(s.transport.connectedStatus)
            armKeepalive()
            flushControls()
            flushMessages()
        case .recovery:
            withSession { $0.keepaliveMillis = keepalive }
        }
        // `forcedTransport` changed while this stream was being opened: switch now.
        if s.kind != .recovery, !(s.kind == .create && !s.transport.isWebSocket),
            !Self.transport(s.transport, satisfies: settings.forcedTransport)
        {
            target = Self.initialTransport(for: settings.forcedTransport)
            requestRebind(cause: "api")
        }
    }

    mutating func loopReceived(delay rawDelay: Int) {
        guard var s = stream else { return }
        let delay = ServerNumbers.millis(rawDelay)
        s.ended = true
        stream = s
        cancel(.transport)
        cancel(.keepalive)
        cancel(.reconnect)
        if !s.transport.isWebSocket { closeConnection(s.connection) }
        if s.kind == .recovery {
            withSession { $0.recovery = nil }
            cancel(.recovery)
            bindSession(target, cause: "recovery.loop")
            return
        }
        if session?.switchPending == true {
            withSession { s in
                s.switchPending = false
                s.nextPoll = nil
            }
            bindSession(target, cause: "\(s.transport.causePrefix).loop")
            return
        }
        // A poll (not the HTTP create, which is a poll of zero length) was answered: the next
        // one continues with the server's values.
        if s.transport.isPolling, target.isPolling, s.transport == target, !(s.kind == .create && !s.transport.isWebSocket) {
            let next = (pollingMillis: delay, idleMillis: s.conokIdleMillis ?? settings.idleTimeout)
            withSession { $0.nextPoll = next }
        } else {
            withSession { $0.nextPoll = nil }
        }
        if s.kind == .create, retryWebSocketOnBind {
            // Created over HTTP because the WS create failed: WS gets one more chance for the
            // bind; if it fails too, Stream-Sense binds over HTTP streaming.
            retryWebSocketOnBind = false
            if Self.transport(.wsStreaming, satisfies: settings.forcedTransport) { target = .wsStreaming }
        }
        if target.isPolling && delay > 0 {
            schedule(.poll, after: delay)
        } else {
            bindSession(target, cause: "\(s.transport.causePrefix).loop")
        }
    }

    mutating func conerrReceived(code: Int, message: String) {
        guard let s = stream else { return }
        stream = nil
        cancel(.transport)
        closeConnection(s.connection)
        if webSocket?.connection == s.connection { webSocket = nil }
        let prefix = s.kind == .recovery ? "recovery" : s.transport.causePrefix
        switch s.kind {
        case .create:
            switch code {
            case 5:
                nextCreateWithTTL = true
                createSession(cause: "ttl.conerr.5")
            case 4, 6, 20, 40, 41, 48:
                scheduleRetry()
            default:
                terminate(code: code, message: message)
            }
        case .bind, .recovery:
            switch code {
            case 4, 5, 6, 20, 40, 41, 48:
                abandonSession(cause: "\(prefix).conerr.\(code)", delay: settings.retryDelay)
            default:
                terminate(code: code, message: message)
            }
        }
    }

    mutating func endReceived(code: Int, message: String) {
        guard var s = stream else { return }
        s.ended = true
        stream = s
        let prefix = s.kind == .recovery ? "recovery" : s.transport.causePrefix
        if code == 41 || code == 48 {
            abandonSession(cause: "\(prefix).end.\(code)", delay: randomDelay(upTo: settings.firstRetryMaxDelay))
        } else {
            terminate(code: code, message: message)
        }
    }

    /// `ERROR` on a stream after CONOK or in a control response: the server could not read a
    /// request. Fatal, as in the official clients: DISCONNECTED, then the error.
    mutating func errorReceived(code: Int, message: String) {
        log(.error, "ERROR \(code) \(message)")
        guard wantsConnection else { return }
        terminate(code: code, message: message)
    }

    /// The server refused or closed the session for good: DISCONNECTED, then the error.
    mutating func terminate(code: Int, message: String) {
        wantsConnection = false
        teardownSession(abortMessagesSent: true)
        closeAllConnections()
        for t in [SessionEngine.Timer.transport, .retry, .recovery] { cancel(t) }
        setStatus(.disconnected)
        notify(.serverError(code: code, message: message))
    }

    /// A server line that cannot be read: error 61 to the application, then a new session.
    mutating func protocolError(_ message: String) {
        log(.error, "Unreadable server line: \(message)")
        guard session != nil || stream != nil else { return }
        if session == nil {
            if let s = stream { closeConnection(s.connection) }
            stream = nil
            webSocket = nil
            scheduleRetry()
        } else {
            abandonSession(cause: "protocol.error", delay: randomDelay(upTo: settings.firstRetryMaxDelay))
        }
        notify(.serverError(code: 61, message: message))
    }

    /// SYNC: with slowing on, a client reading SYNC much later than the server wrote it is
    /// falling behind: move to polling. Slowing follows the value of `slowingEnabled` the
    /// stream was opened with (a change applies to the next connection attempt).
    mutating func syncReceived(seconds: Int) {
        guard let s = stream, s.slowing, s.gotConok, !s.ended, !s.transport.isPolling else { return }
        let late = Saturating.subtract(Saturating.subtract(now, s.boundAt), ServerNumbers.syncMillis(seconds))
        guard late > 7_000 else { return }
        let polling: StreamTransport = s.transport.isWebSocket ? .wsPolling : .httpPolling
        guard Self.transport(polling, satisfies: settings.forcedTransport) else { return }
        log(.warn, "Client is \(late) ms late on SYNC: switching to polling")
        target = polling
        requestRebind(cause: "slow")
    }

    // MARK: control replies

    mutating func requestSucceeded(_ id: String) {
        guard let purpose = takeRequest(id) else { return }
        if case .external(let token) = purpose { notify(.externalReply(token: token, code: nil, message: nil)) }
    }

    mutating func requestFailed(_ id: String, code: Int, message: String) {
        guard let purpose = takeRequest(id) else {
            log(.warn, "REQERR \(code) \(message) for unknown request \(id)")
            return
        }
        switch purpose {
        case .add(let key): subscriptionRefused(key: key, code: code, message: message)
        case .delete(let key): subscriptionDeleteFailed(key: key)
        case .message(let key): messageRefused(key: key, code: code, message: message)
        case .external(let token): notify(.externalReply(token: token, code: code, message: message))
        case .forceRebind: withSession { $0.switchPending = false }
        case .reconf, .constrain, .destroy: log(.warn, "REQERR \(code) \(message)")
        }
    }
}
