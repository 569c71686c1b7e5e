import TLCP

/// Session recovery (docs/protocol/TLCP.md §5.5): after a broken stream the client binds again with
/// `LS_recovery_from=<data notifications received>`, the server answers `PROG` and resends what was
/// lost; the client drops the ones it already had.
extension SessionEngine {
    mutating func startRecovery(cause: String) {
        guard session != nil else { return }
        closeAllConnections()
        stream = nil
        let now = self.now
        withSession { s in
            s.switchPending = false
            s.nextPoll = nil
            s.httpControlInFlight = nil
            s.httpMessageInFlight = nil
            s.recovery = Recovery(startedAt: now, cause: cause)
        }
        setStatus(.tryingRecovery)
        schedule(.recovery, after: randomDelay(upTo: settings.firstRetryMaxDelay))
    }

    /// One recovery attempt: an HTTP polling bind with `LS_recovery_from`.
    mutating func sendRecoveryBind() {
        guard var rec = recovery, let session, let address = sessionAddress else { return }
        rec.attemptAt = now
        withSession { [rec] in $0.recovery = rec }
        let request = BindSessionRequest(
            session: session.id, recoveryFrom: lines.dataCount,
            stream: StreamParameters(polling: true, pollingMillis: 0, idleMillis: 0, cause: rec.cause))
        let id = newConnectionID(.httpStream)
        emit(
            .httpPost(
                id, url: address.httpURL(.bindSession), body: TLCPRequestEncoder.httpBody([.bindSession(request)]),
                headers: extraHeaders(creating: false)))
        stream = Stream(connection: id, transport: .httpPolling, kind: .recovery, sentAt: now)
        schedule(.transport, after: settings.retryDelay)
    }

    mutating func recoveryAttemptFailed() {
        guard let rec = recovery else { return }
        if now - rec.startedAt >= Int64(settings.sessionRecoveryTimeout) {
            abandonSession(cause: "recovery.timeout", delay: 0)
            return
        }
        let elapsed = Int(clamping: now - rec.attemptAt)
        schedule(.recovery, after: Saturating.add(settings.retryDelay, -elapsed))
    }

    /// `PROG,<p>` after a CONOK. During recovery p ≤ count means "drop count − p"; any other
    /// mismatch means the session cannot continue.
    mutating func progReceived(_ p: Int) {
        guard session != nil, let s = stream else { return }
        let count = lines.dataCount
        // A negative PROG is out of range (ServerNumbers): a mismatch like any other.
        if p < 0 || (s.kind == .recovery || s.asksRecovery ? p > count : p != count) {
            log(.warn, "PROG \(p) does not match \(count) data notifications: new session")
            abandonSession(cause: "prog.mismatch.\(p).\(count)", delay: settings.retryDelay)
            return
        }
        lines.skip = count - p
    }
}
