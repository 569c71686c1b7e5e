import TLCP

/// Creating and binding sessions, Stream-Sense, transport switches, retries, disconnect.
extension SessionEngine {
    // MARK: transport choice

    /// The first transport to try for a selection.
    static func initialTransport(for selection: TransportSelection?) -> StreamTransport {
        switch selection {
        case nil, .WS, .WS_STREAMING: return .wsStreaming
        case .WS_POLLING: return .wsPolling
        case .HTTP, .HTTP_STREAMING: return .httpStreaming
        case .HTTP_POLLING: return .httpPolling
        }
    }

    /// Whether a transport satisfies the forced selection.
    static func transport(_ t: StreamTransport, satisfies selection: TransportSelection?) -> Bool {
        switch selection {
        case nil: return true
        case .WS: return t.isWebSocket
        case .HTTP: return !t.isWebSocket
        case .WS_STREAMING: return t == .wsStreaming
        case .WS_POLLING: return t == .wsPolling
        case .HTTP_STREAMING: return t == .httpStreaming
        case .HTTP_POLLING: return t == .httpPolling
        }
    }

    /// Stream-Sense: the next transport after `t` failed, or nil when the selection allows none.
    static func fallback(after t: StreamTransport, selection: TransportSelection?) -> StreamTransport? {
        switch (selection, t) {
        case (nil, .wsStreaming): return .httpStreaming
        case (nil, .httpStreaming): return .httpPolling
        case (nil, .wsPolling): return .httpPolling
        case (.WS?, .wsStreaming): return .wsPolling
        case (.HTTP?, .httpStreaming): return .httpPolling
        default: return nil
        }
    }

    // MARK: API events

    mutating func connectRequested() {
        guard status == .disconnected else { return }
        guard configuredAddress != nil else {
            log(.error, "connect() without a valid server address")
            return
        }
        wantsConnection = true
        target = Self.initialTransport(for: settings.forcedTransport)
        retryWebSocketOnBind = false
        retry = Retry()
        setStatus(.connecting)
        createSession(cause: "api")
    }

    mutating func disconnectRequested() {
        wantsConnection = false
        if let session, status != .disconnected {
            sendDestroy(sessionId: session.id)
        }
        teardownSession(abortMessagesSent: true)
        abortQueuedMessages()
        for t in [SessionEngine.Timer.transport, .retry, .recovery, .keepalive, .reconnect, .poll, .reverseHeartbeat] { cancel(t) }
        closeAllConnections()
        setStatus(.disconnected)
    }

    mutating func settingsChanged(_ s: SessionEngine.Settings, property: String) {
        let old = settings
        settings = s
        switch property {
        case "forcedTransport":
            guard old.forcedTransport != s.forcedTransport, status != .disconnected else { return }
            let wanted = Self.initialTransport(for: s.forcedTransport)
            if let stream, session != nil, recovery == nil, stream.gotConok, !stream.ended {
                if !Self.transport(stream.transport, satisfies: s.forcedTransport) {
                    target = wanted
                    requestRebind(cause: "api")
                }
            } else {
                target = wanted
            }
        case "requestedMaxBandwidth":
            if session != nil, old.requestedMaxBandwidth != s.requestedMaxBandwidth { enqueueControl(.constrain) }
        case "reverseHeartbeatInterval":
            armReverseHeartbeat()
        default:
            break
        }
    }

    // MARK: create

    /// Starts a create_session on the current target transport.
    mutating func createSession(cause: String) {
        guard let address = configuredAddress else { return }
        retry.attemptStartedAt = now
        retry.cause = cause
        var params = StreamParameters(cause: cause)
        // Headers "on session creation only" need an HTTP create (a WS upgrade would carry
        // them for the whole socket); the bind then goes over WS.
        let headersOnCreation = settings.httpExtraHeaders != nil && settings.httpExtraHeadersOnSessionCreationOnly
        let useHTTP = !target.isWebSocket || nextCreateWithTTL || headersOnCreation
        if useHTTP {
            // Official clients create over HTTP in polling mode, then bind.
            params.polling = true
            params.pollingMillis = 0
            params.idleMillis = 0
        } else if target.isPolling {
            params.polling = true
            params.pollingMillis = settings.pollingInterval
            params.idleMillis = settings.idleTimeout
        } else {
            params.keepaliveMillis = settings.keepaliveInterval > 0 ? settings.keepaliveInterval : nil
            params.inactivityMillis = settings.reverseHeartbeatInterval > 0 ? settings.reverseHeartbeatInterval : nil
            params.sendSync = settings.slowingEnabled ? nil : false
        }
        if useHTTP {
            params.keepaliveMillis = settings.keepaliveInterval > 0 ? settings.keepaliveInterval : nil
        }
        let request = CreateSessionRequest(
            user: settings.user, password: settings.password, adapterSet: settings.adapterSet,
            requestedMaxBandwidth: wireBandwidth(settings.requestedMaxBandwidth),
            ttl: nextCreateWithTTL ? .unlimited : nil,
            oldSession: retry.oldSession, stream: params)
        nextCreateWithTTL = false
        if useHTTP {
            let id = newConnectionID(.httpStream)
            emit(
                .httpPost(
                    id, url: address.httpURL(.createSession), body: TLCPRequestEncoder.httpBody([.createSession(request)]),
                    headers: extraHeaders(creating: true)))
            stream = Stream(connection: id, transport: .httpPolling, kind: .create, sentAt: now)
        } else {
            let ws = openWebSocket(url: address.webSocketURL, creating: true)
            sendOnWebSocket(TLCPRequestEncoder.webSocketMessage(.createSession(request)))
            var created = Stream(connection: ws, transport: target, kind: .create, sentAt: now)
            created.slowing = !target.isPolling && params.sendSync == nil
            stream = created
        }
        schedule(.transport, after: Saturating.add(settings.retryDelay, target.isPolling && !useHTTP ? settings.idleTimeout : 0))
    }

    func wireBandwidth(_ b: RequestedMaxBandwidth) -> RequestedBandwidth? {
        switch b {
        case .unlimited: return nil
        case .limited(let v): return .kbps(v)
        }
    }

    /// Opens a WebSocket (closing another one) and queues `wsok`.
    mutating func openWebSocket(url: String, creating: Bool) -> SessionEngine.ConnectionID {
        if let ws = webSocket {
            if ws.url == url, connections[ws.connection] != nil { return ws.connection }
            closeConnection(ws.connection)
        }
        let id = newConnectionID(.webSocket)
        webSocket = WebSocket(connection: id, url: url, outbox: ["wsok"])
        emit(.openWebSocket(id, url: url, headers: extraHeaders(creating: creating)))
        return id
    }

    mutating func sendOnWebSocket(_ text: String) {
        guard var ws = webSocket else { return }
        if ws.open {
            emit(.sendWebSocket(ws.connection, text))
        } else {
            ws.outbox.append(text)
            webSocket = ws
        }
    }

    mutating func webSocketOpened(_ id: SessionEngine.ConnectionID) {
        guard var ws = webSocket, ws.connection == id else { return }
        ws.open = true
        let outbox = ws.outbox
        ws.outbox = []
        webSocket = ws
        for m in outbox { emit(.sendWebSocket(id, m)) }
    }

    // MARK: bind

    /// Binds the current session on `transport`.
    mutating func bindSession(_ transport: StreamTransport, cause: String) {
        guard let session, let address = sessionAddress else { return }
        var params = StreamParameters(cause: cause)
        let continuation = session.nextPoll
        withSession { $0.nextPoll = nil }
        if transport.isPolling {
            params.polling = true
            params.pollingMillis = continuation?.pollingMillis ?? settings.pollingInterval
            params.idleMillis = continuation?.idleMillis ?? settings.idleTimeout
        } else {
            if !transport.isWebSocket { params.contentLength = Int(clamping: settings.contentLength) }
            params.keepaliveMillis = settings.keepaliveInterval > 0 ? settings.keepaliveInterval : nil
            params.inactivityMillis = settings.reverseHeartbeatInterval > 0 ? settings.reverseHeartbeatInterval : nil
            params.sendSync = settings.slowingEnabled ? nil : false
        }
        // The next poll on the socket that carried the previous one names no session
        // (docs/protocol/TLCP.md §2.2).
        let samePollingSocket =
            transport == .wsPolling && continuation != nil && webSocket?.open == true
            && webSocket?.sessionBound == true && webSocket?.url == address.webSocketURL
        let request = BindSessionRequest(
            session: samePollingSocket ? nil : session.id,
            recoveryFrom: session.bindsAskRecovery ? lines.dataCount : nil, stream: params)
        let id: SessionEngine.ConnectionID
        if transport.isWebSocket {
            id = openWebSocket(url: address.webSocketURL, creating: false)
            sendOnWebSocket(TLCPRequestEncoder.webSocketMessage(.bindSession(request)))
        } else {
            if let ws = webSocket {
                closeConnection(ws.connection)
                webSocket = nil
            }
            id = newConnectionID(.httpStream)
            emit(
                .httpPost(
                    id, url: address.httpURL(.bindSession), body: TLCPRequestEncoder.httpBody([.bindSession(request)]),
                    headers: extraHeaders(creating: false)))
        }
        var bound = Stream(connection: id, transport: transport, kind: .bind, sentAt: now)
        bound.asksRecovery = request.recoveryFrom != nil
        bound.slowing = !transport.isPolling && params.sendSync == nil
        stream = bound
        // A poll may be held by the server for the idle time it was asked for.
        schedule(
            .transport, after: Saturating.add(settings.retryDelay, transport.isPolling ? (params.idleMillis ?? settings.idleTimeout) : 0))
    }

    /// Asks the server to unbind the stream (force_rebind); the bind on `target` follows LOOP.
    mutating func requestRebind(cause: String) {
        guard session?.switchPending != true else { return }
        withSession { $0.switchPending = true }
        enqueueControl(.forceRebind(cause: cause))
    }

    // MARK: connection events

    mutating func connectionEnded(_ id: SessionEngine.ConnectionID, failure: String?) {
        guard let role = connections.removeValue(forKey: id) else { return }
        if let failure { log(.debug, "connection \(id) failed: \(failure)") }
        switch role {
        case .webSocket:
            // streamLost first: it looks at whether this socket had opened.
            if let stream, stream.connection == id, !stream.ended {
                streamLost(cause: "ws.error")
            }
            if webSocket?.connection == id { webSocket = nil }
        case .httpStream:
            if let stream, stream.connection == id, !stream.ended {
                streamLost(cause: "http.error")
            }
        case .httpControl(let ids):
            withSession { s in
                s.httpControlInFlight = nil
                for r in ids { s.requests.removeValue(forKey: r) }
            }
            flushControls()
        case .httpMessage(let ids):
            withSession { s in
                s.httpMessageInFlight = nil
                for r in ids { s.requests.removeValue(forKey: r) }
            }
            flushMessages()
        case .httpHeartbeat, .httpFireAndForget:
            break
        }
    }

    /// A connection refused locally for good (certificate pins): no retry; the code goes to
    /// the application as a server error, after DISCONNECTED.
    mutating func connectionRejected(_ id: SessionEngine.ConnectionID, code: Int, message: String) {
        guard connections.removeValue(forKey: id) != nil else { return }
        log(.error, "connection \(id) refused: \(code) \(message)")
        guard wantsConnection, status != .disconnected else { return }
        terminate(code: code, message: message)
    }

    /// The stream connection broke without LOOP or END.
    mutating func streamLost(cause: String) {
        guard let lost = stream else { return }
        stream = nil
        cancel(.transport)
        cancel(.keepalive)
        cancel(.reconnect)
        if lost.kind != .create, !lost.gotConok, requestMayHaveReachedServer(lost) {
            withSession { $0.bindsAskRecovery = true }
        }
        closeConnection(lost.connection)
        if lost.transport.isWebSocket || lost.kind == .create, let ws = webSocket, ws.connection == lost.connection {
            webSocket = nil
        }
        switch lost.kind {
        case .create where !lost.gotConok:
            createFailed(transport: lost.transport, wasWebSocket: connectionWasWebSocket(lost), cause: cause)
        case .recovery:
            recoveryAttemptFailed()
        case .create, .bind:
            if !lost.gotConok, let next = Self.fallback(after: lost.transport, selection: settings.forcedTransport) {
                // The transport does not work: Stream-Sense moves on without losing the session.
                target = next
                bindSession(next, cause: lost.transport.isWebSocket ? "ws.unavailable" : "http.streaming.unavailable")
            } else {
                sessionInterrupted(cause: cause)
            }
        }
    }

    func connectionWasWebSocket(_ s: Stream) -> Bool { s.transport.isWebSocket && s.kind != .recovery }

    /// Whether the request that opened `s` may have been read by the server: an HTTP request
    /// may have been, a WebSocket bind only once the socket opened (before that it waits in
    /// the outbox).
    func requestMayHaveReachedServer(_ s: Stream) -> Bool {
        guard s.transport.isWebSocket, s.kind != .recovery else { return true }
        guard let ws = webSocket, ws.connection == s.connection else { return true }
        return ws.open
    }

    /// A working session lost its stream: recover it, or start a new one.
    mutating func sessionInterrupted(cause: String) {
        guard session != nil else { return }
        if settings.sessionRecoveryTimeout > 0 {
            startRecovery(cause: cause)
        } else {
            abandonSession(cause: cause, delay: randomDelay(upTo: settings.firstRetryMaxDelay))
        }
    }

    /// A create attempt failed (no answer, connection error).
    mutating func createFailed(transport: StreamTransport, wasWebSocket: Bool, cause: String) {
        if wasWebSocket, let next = Self.fallback(after: target, selection: settings.forcedTransport) {
            retryWebSocketOnBind = !next.isWebSocket && target == .wsStreaming
            target = next
            createSession(cause: "ws.unavailable")
            return
        }
        scheduleRetry()
    }

    /// DISCONNECTED:WILL-RETRY, then a new create after the (growing) retry delay, counted from
    /// the start of the failed attempt.
    mutating func scheduleRetry() {
        retry.failures += 1
        cancel(.transport)
        var delay = settings.retryDelay
        if retry.failures > 5 {
            let (grown, overflow) = delay.multipliedReportingOverflow(by: 1 << min(retry.failures - 5, 4))
            delay = overflow ? delay : min(grown, max(60_000, settings.retryDelay))
        }
        let elapsed = Int(clamping: now - retry.attemptStartedAt)
        setStatus(.willRetry)
        schedule(.retry, after: Saturating.add(delay, -elapsed))
    }

    /// Gives up the current session and creates a new one after `delay`.
    mutating func abandonSession(cause: String, delay: Int) {
        let old = session?.id
        teardownSession(abortMessagesSent: true)
        closeAllConnections()
        retry.oldSession = old
        retry.cause = cause
        retry.attemptStartedAt = now
        setStatus(.willRetry)
        cancel(.recovery)
        schedule(.retry, after: delay)
    }

    /// Ends the session locally: subscriptions go back to waiting, messages in flight are
    /// aborted (they stay queued when not yet sent). The session value, with its stream,
    /// recovery, requests in flight and progressives, is dropped (or the create under way).
    mutating func teardownSession(abortMessagesSent: Bool) {
        if session != nil {
            subscriptionsLostSession()
            abortSentMessages()
            notify(.property(.sessionId(nil)))
            dropExternalControls()
            notify(.sessionEnded)
        }
        state = .idle
        lines = LineCount()
        retryWebSocketOnBind = false
        // External controls queued while no session exists wait for the next one.
        controlQueue.removeAll { if case .external = $0 { return false } else { return true } }
        for t in [SessionEngine.Timer.transport, .keepalive, .reconnect, .poll, .reverseHeartbeat] { cancel(t) }
    }

    /// External (MPN) controls belong to their session: those sent without a reply and those
    /// still queued are handed back to the extension, which decides what to do in the next one.
    mutating func dropExternalControls() {
        let sent = requests.compactMap { id, purpose -> (Int, Int)? in
            guard case .external(let token) = purpose, let n = Int(id) else { return nil }
            return (n, token)
        }.sorted { $0.0 < $1.0 }
        for (_, token) in sent { notify(.externalDropped(token: token, sent: true)) }
        for c in controlQueue {
            if case .external(let token, _, _) = c { notify(.externalDropped(token: token, sent: false)) }
        }
        controlQueue.removeAll { if case .external = $0 { return true } else { return false } }
    }

    mutating func closeAllConnections() {
        for id in connections.keys.sorted() {
            if case .httpFireAndForget = connections[id] { continue }
            closeConnection(id)
        }
        webSocket = nil
    }

    /// `destroy` on the best channel available.
    mutating func sendDestroy(sessionId: String) {
        let op = ControlOperation.destroy(causeCode: nil, causeMessage: nil, closeSocket: true)
        if let ws = webSocket, ws.open, ws.sessionBound {
            let req = ControlRequest(requestId: newRequestID(.destroy), operation: op, cause: "api")
            emit(.sendWebSocket(ws.connection, TLCPRequestEncoder.webSocketMessage(.control(req))))
        } else if let address = sessionAddress {
            let req = ControlRequest(requestId: newRequestID(.destroy), operation: op, cause: "api")
            let id = newConnectionID(.httpFireAndForget)
            emit(
                .httpPost(
                    id, url: address.httpURL(.control, session: sessionId),
                    body: TLCPRequestEncoder.httpBody([.control(req)]), headers: extraHeaders(creating: false)))
        }
    }
}
