import TLCP

/// Timers of the session engine: what each does when it fires, keepalive and stall checks.
extension SessionEngine {
    mutating func timerFired(_ timer: SessionEngine.Timer) {
        switch timer {
        case .transport:
            guard var s = stream, !s.gotConok || s.transport.isPolling else { return }
            if s.kind == .bind, s.transport == .httpStreaming, !s.gotConok, !s.fallbackRebindRequested, session != nil,
                recovery == nil, let next = Self.fallback(after: s.transport, selection: settings.forcedTransport)
            {
                // docs/protocol/TLCP.md §5.3 and §6 E9: a mute HTTP stream may be held by a
                // buffering proxy while the server has bound the session to it. Ask the server to
                // unbind it (force_rebind on a control connection); the polling bind follows its
                // LOOP. If nothing comes within another retryDelay, the stream is given up
                // (streamLost below).
                s.fallbackRebindRequested = true
                stream = s
                target = next
                requestRebind(cause: "http.streaming.unavailable")
                schedule(.transport, after: settings.retryDelay)
                return
            }
            let prefix = s.kind == .recovery ? "recovery" : s.transport.causePrefix
            if s.transport.isPolling && s.gotConok {
                streamLost(cause: "\(prefix).idle.timeout")
            } else {
                streamLost(cause: "\(prefix).timeout")
            }
        case .retry:
            guard wantsConnection, session == nil else { return }
            target = Self.initialTransport(for: settings.forcedTransport)
            setStatus(.connecting)
            createSession(cause: retry.cause)
        case .recovery:
            sendRecoveryBind()
        case .keepalive:
            keepaliveCheck()
        case .reconnect:
            guard status == .stalled, let s = stream else { return }
            streamLost(cause: "\(s.transport.causePrefix).stalled")
        case .poll:
            guard session != nil, let s = stream, s.ended else { return }
            bindSession(target, cause: "\(target.causePrefix).loop")
        case .reverseHeartbeat:
            reverseHeartbeatFired()
        }
    }

    /// Keepalive/stall detection on streams: silence longer than keepalive + stalledTimeout
    /// means STALLED; `reconnect` then gives up after reconnectTimeout.
    mutating func armKeepalive() {
        guard let session, let s = stream, !s.transport.isPolling else { return }
        let keepalive =
            session.keepaliveMillis > 0 ? session.keepaliveMillis : (settings.keepaliveInterval > 0 ? settings.keepaliveInterval : 5_000)
        schedule(.keepalive, after: Saturating.add(keepalive, settings.stalledTimeout))
    }

    mutating func keepaliveCheck() {
        guard let session, let s = stream, s.gotConok, !s.ended, !s.transport.isPolling else { return }
        let keepalive =
            session.keepaliveMillis > 0 ? session.keepaliveMillis : (settings.keepaliveInterval > 0 ? settings.keepaliveInterval : 5_000)
        let limit = Int64(Saturating.add(keepalive, settings.stalledTimeout))
        let silent = now - lines.lastDataAt
        if silent < limit {
            schedule(.keepalive, after: Int(limit - silent))
            return
        }
        setStatus(.stalled)
        schedule(.reconnect, after: settings.reconnectTimeout)
    }

    /// Data arrived on the stream: leave STALLED.
    mutating func streamActivity() {
        lines.lastDataAt = now
        if status == .stalled, let s = stream {
            cancel(.reconnect)
            setStatus(s.transport.connectedStatus)
            armKeepalive()
        }
    }
}
