import TLCP

/// One message sent with `sendMessage`.
struct EngineMessage {
    var key: Int
    var spec: SessionEngine.MessageSpec
    /// `LS_msg_prog` once sent.
    var progressive: Int?
    var sent = false
    var requestId: String?

    var sequenceKey: String { spec.sequence ?? MessageRequest.reservedSequence }
}

/// Messages: queueing, progressives per sequence, MSGDONE/MSGFAIL/REQERR outcomes, aborts.
/// Every message with an outcome gets exactly one.
extension SessionEngine {
    mutating func messageRequested(key: Int, spec: SessionEngine.MessageSpec) {
        if !wantsConnection || status == .disconnected || status == .willRetry || status == .tryingRecovery {
            if !spec.enqueueWhileDisconnected {
                if spec.wantsOutcome { notify(.message(key: key, .aborted(sentOnNetwork: false))) }
                return
            }
        }
        messages[key] = EngineMessage(key: key, spec: spec)
        messageQueue.append(key)
        flushMessages()
    }

    mutating func buildMessage(_ key: Int, overWebSocket: Bool) -> MessageRequest? {
        guard let m = messages[key], !m.sent else { return nil }
        let spec = m.spec
        var prog: Int?
        if spec.wantsOutcome || spec.sequence != nil {
            prog = session?.messageProgressives[m.sequenceKey] ?? 1
        }
        let reqId = newRequestID(.message(key: key))
        let maxWait = spec.sequence != nil && spec.timeout >= 0 ? spec.timeout : nil
        let fireAndForget = !spec.wantsOutcome && spec.sequence == nil
        return MessageRequest(
            requestId: reqId, message: spec.text, sequence: spec.sequence, progressive: prog,
            maxWait: maxWait, ack: fireAndForget && overWebSocket ? false : nil,
            outcome: spec.wantsOutcome ? nil : false)
    }

    /// Undoes `buildMessage` for a message that did not fit in the batch.
    mutating func unbuildMessage(_ key: Int, _ request: MessageRequest) {
        _ = takeRequest(request.requestId)
        nextRequestID -= 1
    }

    mutating func messageSent(_ key: Int, requestId: String) {
        guard var m = messages[key] else { return }
        m.requestId = requestId
        if m.spec.wantsOutcome || m.spec.sequence != nil {
            let sequence = m.sequenceKey
            let next =
                withSession { s in
                    let next = s.messageProgressives[sequence, default: 1]
                    s.messageProgressives[sequence] = next + 1
                    return next
                } ?? 1
            m.progressive = next
        }
        m.sent = true
        if m.spec.wantsOutcome {
            messages[key] = m
        } else {
            messages.removeValue(forKey: key)
            withSession { $0.requests = $0.requests.filter { $0.value != .message(key: key) } }
        }
    }

    func messageKey(sequence: String?, progressive: Int) -> Int? {
        let seq = sequence ?? MessageRequest.reservedSequence
        for (key, m) in messages where m.sent && m.sequenceKey == seq && m.progressive == progressive { return key }
        return nil
    }

    mutating func finishMessage(_ key: Int, _ outcome: SessionEngine.MessageOutcome) {
        guard let m = messages.removeValue(forKey: key) else { return }
        withSession { s in
            if let r = m.requestId { s.requests.removeValue(forKey: r) }
            s.requests = s.requests.filter { $0.value != .message(key: key) }
        }
        if m.spec.wantsOutcome { notify(.message(key: key, outcome)) }
    }

    mutating func messageDone(sequence: String?, progressive: Int, response: String) {
        guard let key = messageKey(sequence: sequence, progressive: progressive) else { return }
        finishMessage(key, .processed(response: response))
    }

    mutating func messageFailed(sequence: String?, progressive: Int, code: Int, message: String) {
        switch code {
        case 32, 33:
            return
        case 39:
            let count = Saturating.clamp(Int(message.strippingSpaces()) ?? 1, to: ServerNumbers.skippedMessages)
            let first = Saturating.add(Saturating.add(progressive, -count), 1)
            let seq = sequence ?? MessageRequest.reservedSequence
            let keys = messages.filter { _, m in
                guard m.sent, m.sequenceKey == seq, let p = m.progressive else { return false }
                return p >= first && p <= progressive
            }.sorted { ($0.value.progressive ?? 0) < ($1.value.progressive ?? 0) }.map(\.key)
            for key in keys { finishMessage(key, .discarded) }
        case 38:
            if let key = messageKey(sequence: sequence, progressive: progressive) { finishMessage(key, .discarded) }
        default:
            guard let key = messageKey(sequence: sequence, progressive: progressive) else { return }
            finishMessage(key, code <= 0 ? .denied(code: code, message: message) : .failed)
        }
    }

    /// REQERR to a msg request.
    mutating func messageRefused(key: Int, code: Int, message: String) {
        if code == 32 || code == 33 { return }
        finishMessage(key, code <= 0 ? .denied(code: code, message: message) : .failed)
    }

    /// Session lost: messages already sent can no longer get their outcome.
    mutating func abortSentMessages() {
        for key in messages.keys.sorted() where messages[key]?.sent == true {
            finishMessage(key, .aborted(sentOnNetwork: true))
        }
    }

    /// disconnect(): every pending message is aborted.
    mutating func abortQueuedMessages() {
        for key in messages.keys.sorted() {
            let sent = messages[key]?.sent ?? false
            finishMessage(key, .aborted(sentOnNetwork: sent))
        }
        messageQueue.removeAll()
    }
}

extension String {
    func strippingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
