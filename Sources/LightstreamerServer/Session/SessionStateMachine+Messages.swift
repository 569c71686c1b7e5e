import TLCP

/// Client messages (docs/protocol/TLCP.md §2.4), their sequences and outcomes, and heartbeats
/// (§2.5).
extension SessionStateMachine {
    /// A `msg` request for this session.
    public mutating func message(_ request: MessageRequest, origin: RequestOrigin, now: Int64) -> [Action] {
        lastClientActivity = now
        guard isActive else {
            replyError(origin, request.requestId, SessionRefusal(code: 20, message: "Session not found"), now: now)
            return output.take()
        }
        let ack = request.ack != false
        let wantsOutcome = request.outcome != false
        guard let name = request.sequence else {
            replyOK(origin, request.requestId, ack: ack, now: now)
            dispatch(
                sequence: nil, progressive: request.progressive, text: request.message,
                wantsOutcome: wantsOutcome && request.progressive != nil)
            return output.take()
        }
        // The parser guarantees a progressive with a sequence.
        let prog = request.progressive ?? 1
        if sequences[name] == nil, sequences.count >= settings.maxMessageSequences {
            replyError(
                origin, request.requestId,
                SessionRefusal(code: 65, message: "Too many message sequences in this session (at most \(settings.maxMessageSequences))"),
                now: now)
            return output.take()
        }
        // The next expected message is never queued for long: it goes to the adapter.
        if queuedMessageCount >= settings.maxQueuedMessages, prog != (sequences[name]?.next ?? 1) {
            replyError(
                origin, request.requestId,
                SessionRefusal(code: 65, message: "Too many messages waiting in this session (at most \(settings.maxQueuedMessages))"),
                now: now)
            return output.take()
        }
        var seq = sequences[name] ?? MessageSequenceState()
        if let wait = request.maxWait { seq.maxWaitMillis = min(max(wait, 0), settings.maxMessageWaitMillis) }
        if prog < seq.next {
            sequences[name] = seq
            replyOK(origin, request.requestId, ack: ack, now: now)
            emitData(
                .msgfail(
                    sequence: name, progressive: prog, code: 32,
                    message: "Progressive \(prog) already handled or skipped"), now: now)
            return output.take()
        }
        if seq.queued[prog] != nil || (seq.busy && prog == seq.next) {
            sequences[name] = seq
            replyOK(origin, request.requestId, ack: ack, now: now)
            emitData(.msgfail(sequence: name, progressive: prog, code: 33, message: "Progressive \(prog) already queued"), now: now)
            return output.take()
        }
        seq.queued[prog] = (request.message, wantsOutcome)
        queuedMessageCount += 1
        sequences[name] = seq
        replyOK(origin, request.requestId, ack: ack, now: now)
        dispatchNext(in: name, now: now)
        return output.take()
    }

    mutating func dispatch(sequence: String?, progressive: Int?, text: String, wantsOutcome: Bool) {
        let id = nextMessageId
        nextMessageId += 1
        pendingMessages[id] = PendingMessage(sequence: sequence, progressive: progressive, wantsOutcome: wantsOutcome)
        output.actions.append(.handleMessage(MessageDispatch(id: id, sequence: sequence, progressive: progressive, text: text)))
    }

    /// Hands the next message of a sequence to the adapter, or waits for the missing ones.
    mutating func dispatchNext(in name: String, now: Int64) {
        guard var seq = sequences[name], !seq.busy else { return }
        if let m = seq.queued.removeValue(forKey: seq.next) {
            queuedMessageCount -= 1
            seq.busy = true
            if seq.waitArmed {
                seq.waitArmed = false
                output.actions.append(.cancelTimer(.messageWait(sequence: name)))
            }
            sequences[name] = seq
            dispatch(sequence: name, progressive: seq.next, text: m.text, wantsOutcome: m.outcome)
            return
        }
        if !seq.queued.isEmpty, !seq.waitArmed {
            seq.waitArmed = true
            let wait = seq.maxWaitMillis ?? settings.defaultMessageMaxWaitMillis
            output.actions.append(.armTimer(.messageWait(sequence: name), atMillis: Saturating.deadline(now, plus: wait)))
        }
        sequences[name] = seq
    }

    /// Missing progressives waited long enough: report them skipped (38 for one, 39 with the
    /// count for several) and go on with the next queued message.
    mutating func messageWaitExpired(sequence name: String, now: Int64) {
        guard !isClosed, var seq = sequences[name] else { return }
        seq.waitArmed = false
        guard !seq.busy, seq.queued[seq.next] == nil, let first = seq.queued.keys.min() else {
            sequences[name] = seq
            return
        }
        let skipped = first - seq.next
        if skipped == 1 {
            emitData(.msgfail(sequence: name, progressive: seq.next, code: 38, message: "Message not received in time"), now: now)
        } else {
            emitData(.msgfail(sequence: name, progressive: first - 1, code: 39, message: String(skipped)), now: now)
        }
        seq.next = first
        sequences[name] = seq
        dispatchNext(in: name, now: now)
    }

    /// The Metadata Adapter finished with a message: the response text, or a refusal.
    public mutating func messageHandled(_ id: Int, _ result: Result<String?, SessionRefusal>, now: Int64) -> [Action] {
        guard let pending = pendingMessages.removeValue(forKey: id), !isClosed else { return output.take() }
        if pending.wantsOutcome, let prog = pending.progressive {
            switch result {
            case .success(let response):
                emitData(.msgdone(sequence: pending.sequence, progressive: prog, response: response ?? ""), now: now)
            case .failure(let refusal):
                emitData(.msgfail(sequence: pending.sequence, progressive: prog, code: refusal.code, message: refusal.message), now: now)
            }
        }
        if let name = pending.sequence, var seq = sequences[name] {
            seq.busy = false
            seq.next += 1
            sequences[name] = seq
            dispatchNext(in: name, now: now)
        }
        return output.take()
    }

    /// A `heartbeat` (any control also counts as one). Over HTTP it is answered by a bare REQOK.
    public mutating func heartbeat(origin: RequestOrigin, now: Int64) -> [Action] {
        lastClientActivity = now
        if case .http(let conn, let index) = origin {
            output.actions.append(.httpReply(conn, index: index, line: TLCPNotification.reqok(requestId: nil).encoded(version: version)))
        }
        return output.take()
    }
}
