import TLCP

/// Outgoing control, msg and heartbeat requests: queues, batching within the CONOK request
/// limit, the channel choice (the session's WebSocket, else HTTP to the control address) and
/// the reverse heartbeat.
extension SessionEngine {
    /// Whether requests can go on the WebSocket: open and bound to the session.
    var webSocketCarriesSession: Bool {
        guard let ws = webSocket, ws.open, ws.sessionBound, connections[ws.connection] != nil else { return false }
        return true
    }

    /// Whether requests may be sent now (a session exists and no recovery is under way).
    var canSendRequests: Bool { session != nil && recovery == nil && status != .disconnected && status != .willRetry }

    /// External controls made for a session that is no longer current go back at once.
    mutating func externalControlsRequested(_ list: [SessionEngine.ExternalControl]) {
        for c in list {
            if let s = c.session, s != session?.id {
                notify(.externalDropped(token: c.token, sent: false))
            } else {
                controlQueue.append(.external(token: c.token, c.operation, cause: c.cause))
            }
        }
        flushControls()
    }

    mutating func enqueueControl(_ c: PendingControl) {
        controlQueue.append(c)
        flushControls()
    }

    mutating func flushControls() {
        guard canSendRequests, !controlQueue.isEmpty, let session else { return }
        let overWS = webSocketCarriesSession
        if !overWS, session.httpControlInFlight != nil { return }
        repeat {
            var lines: [String] = []
            var ids: [String] = []
            var size = overWS ? 7 : 0
            while let c = controlQueue.first {
                guard let (request, purpose) = buildControl(c, overWebSocket: overWS) else {
                    controlQueue.removeFirst()
                    continue
                }
                let line = request.parameters.encoded
                if !lines.isEmpty, size + 2 + line.utf8.count > session.requestLimit {
                    _ = takeRequest(request.requestId)
                    nextRequestID -= 1
                    if case .mpnActivate = request.operation { nextSubscriptionID -= 1 }
                    break
                }
                if case .external(let token) = purpose, case .mpnActivate(let p) = request.operation {
                    notify(.externalSubscriptionId(token: token, subscriptionId: p.subscriptionId))
                }
                controlQueue.removeFirst()
                lines.append(line)
                ids.append(request.requestId)
                size += 2 + line.utf8.count
            }
            guard !lines.isEmpty else { return }
            noteRequestSent()
            if overWS, let ws = webSocket {
                emit(.sendWebSocket(ws.connection, "control\r\n" + lines.joined(separator: "\r\n")))
            } else if let address = sessionAddress {
                let id = newConnectionID(.httpControl(ids))
                withSession { $0.httpControlInFlight = id }
                emit(
                    .httpPost(
                        id, url: address.httpURL(.control, session: session.id), body: lines.joined(separator: "\r\n"),
                        headers: extraHeaders(creating: false)))
                return
            }
        } while overWS && !controlQueue.isEmpty
    }

    /// The request for a queued control, with a new request id; nil when it became moot.
    mutating func buildControl(_ c: PendingControl, overWebSocket: Bool) -> (ControlRequest, RequestPurpose)? {
        let ack: Bool? = overWebSocket ? false : nil
        switch c {
        case .add(let key):
            guard let sub = subscriptions[key], let subId = sub.subscriptionId, sub.phase == .subscribing else { return nil }
            let purpose = RequestPurpose.add(key: key)
            return (ControlRequest(requestId: newRequestID(purpose), operation: .add(sub.addParameters(subId)), ack: ack), purpose)
        case .delete(let subId, let key):
            let purpose = RequestPurpose.delete(key: key)
            return (ControlRequest(requestId: newRequestID(purpose), operation: .delete(subscriptionId: subId), ack: ack), purpose)
        case .reconf(let key):
            guard let sub = subscriptions[key], let subId = sub.subscriptionId, sub.phase == .subscribed else { return nil }
            let purpose = RequestPurpose.reconf(key: key)
            let freq = sub.spec.maxFrequency ?? .unlimited
            return (
                ControlRequest(requestId: newRequestID(purpose), operation: .reconf(subscriptionId: subId, maxFrequency: freq)), purpose
            )
        case .constrain:
            let purpose = RequestPurpose.constrain
            return (
                ControlRequest(
                    requestId: newRequestID(purpose),
                    operation: .constrain(maxBandwidth: wireBandwidth(settings.requestedMaxBandwidth) ?? .unlimited)), purpose
            )
        case .forceRebind(let cause):
            guard let s = stream, !s.ended else {
                withSession { $0.switchPending = false }
                return nil
            }
            let purpose = RequestPurpose.forceRebind
            let close: Bool? = s.transport.isWebSocket && !target.isWebSocket ? true : nil
            return (
                ControlRequest(
                    requestId: newRequestID(purpose), operation: .forceRebind(pollingMillis: nil, closeSocket: close),
                    cause: cause), purpose
            )
        case .external(let token, var op, let cause):
            let purpose = RequestPurpose.external(token: token)
            if case .mpnActivate(var p) = op {
                // The activation's LS_subId comes from the counter `add` uses.
                p.subscriptionId = nextSubscriptionID
                nextSubscriptionID += 1
                op = .mpnActivate(p)
            }
            return (ControlRequest(requestId: newRequestID(purpose), operation: op, cause: cause), purpose)
        }
    }

    mutating func flushMessages() {
        guard canSendRequests, !messageQueue.isEmpty, let session else { return }
        let overWS = webSocketCarriesSession
        if !overWS, session.httpMessageInFlight != nil { return }
        repeat {
            var lines: [String] = []
            var ids: [String] = []
            var size = overWS ? 3 : 0
            while let key = messageQueue.first {
                guard let request = buildMessage(key, overWebSocket: overWS) else {
                    messageQueue.removeFirst()
                    continue
                }
                let line = request.parameters.encoded
                if !lines.isEmpty, size + 2 + line.utf8.count > session.requestLimit {
                    unbuildMessage(key, request)
                    break
                }
                messageQueue.removeFirst()
                messageSent(key, requestId: request.requestId)
                lines.append(line)
                ids.append(request.requestId)
                size += 2 + line.utf8.count
            }
            guard !lines.isEmpty else { return }
            noteRequestSent()
            if overWS, let ws = webSocket {
                emit(.sendWebSocket(ws.connection, "msg\r\n" + lines.joined(separator: "\r\n")))
            } else if let address = sessionAddress {
                let id = newConnectionID(.httpMessage(ids))
                withSession { $0.httpMessageInFlight = id }
                emit(
                    .httpPost(
                        id, url: address.httpURL(.msg, session: session.id), body: lines.joined(separator: "\r\n"),
                        headers: extraHeaders(creating: false)))
                return
            }
        } while overWS && !messageQueue.isEmpty
    }

    // MARK: reverse heartbeat

    mutating func noteRequestSent() {
        lastRequestSentAt = now
    }

    mutating func armReverseHeartbeat() {
        cancel(.reverseHeartbeat)
        guard settings.reverseHeartbeatInterval > 0, session != nil else { return }
        schedule(.reverseHeartbeat, after: settings.reverseHeartbeatInterval)
    }

    mutating func reverseHeartbeatFired() {
        let interval = settings.reverseHeartbeatInterval
        guard interval > 0, let session else { return }
        let idle = now - lastRequestSentAt
        if idle < Int64(interval) {
            schedule(.reverseHeartbeat, after: interval - Int(idle))
            return
        }
        schedule(.reverseHeartbeat, after: interval)
        guard canSendRequests else { return }
        noteRequestSent()
        if webSocketCarriesSession, let ws = webSocket {
            emit(.sendWebSocket(ws.connection, "heartbeat\r\n\r\n"))
        } else if let address = sessionAddress {
            let id = newConnectionID(.httpHeartbeat)
            emit(
                .httpPost(
                    id, url: address.httpURL(.heartbeat, session: session.id), body: "\r\n",
                    headers: extraHeaders(creating: false)))
        }
    }
}
