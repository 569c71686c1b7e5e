import Foundation

/// Connection policy of a `LightstreamerClient` (client-api.md 1.6, seed 004). Every setter
/// checks the documented precondition (a trap, as in the official API), fires
/// `client(_:didChangeProperty:)` only when the value changes, and takes effect as the seed
/// says: at once (forcedTransport, requestedMaxBandwidth, reverseHeartbeatInterval, timeouts) or
/// on the next bind/poll/create (contentLength, keepaliveInterval, idleTimeout, pollingInterval,
/// slowingEnabled, serverInstanceAddressIgnored).
public final class ConnectionOptions: CustomStringConvertible, @unchecked Sendable {
    private let lock = NSLock()
    private var values = EngineSettings()
    private var real: RealMaxBandwidth?
    weak var core: ClientCore?

    init() {}

    /// The engine's view of the options (merged into the details' values by the client).
    var snapshot: EngineSettings { lock.withLock { values } }

    private func set<T: Equatable>(_ keyPath: WritableKeyPath<EngineSettings, T>, _ value: T, _ name: String) {
        let changed: Bool = lock.withLock {
            guard values[keyPath: keyPath] != value else { return false }
            values[keyPath: keyPath] = value
            return true
        }
        if changed { core?.optionChanged(name) }
    }

    private func get<T>(_ keyPath: KeyPath<EngineSettings, T>) -> T { lock.withLock { values[keyPath: keyPath] } }

    /// Bytes of an HTTP streaming response before the server closes it (HTTP-STREAMING only).
    /// Default 50,000,000; must be > 0; used from the next bind.
    public var contentLength: UInt64 {
        get { get(\.contentLength) }
        set {
            precondition(newValue > 0, "contentLength must be greater than zero")
            set(\.contentLength, newValue, "contentLength")
        }
    }

    /// Upper bound of the random delay before the first reconnection. Default 100 ms; > 0.
    public var firstRetryMaxDelay: Millis {
        get { get(\.firstRetryMaxDelay) }
        set {
            precondition(newValue > 0, "firstRetryMaxDelay must be greater than zero")
            set(\.firstRetryMaxDelay, newValue, "firstRetryMaxDelay")
        }
    }

    /// Forced transport, or nil for full Stream-Sense. Changing it while connected switches the
    /// transport of the live session (force_rebind).
    public var forcedTransport: TransportSelection? {
        get { get(\.forcedTransport) }
        set { set(\.forcedTransport, newValue, "forcedTransport") }
    }

    /// Extra HTTP headers for every request (and the WebSocket upgrade). Default nil.
    public var HTTPExtraHeaders: [String: String]? {
        get { get(\.httpExtraHeaders) }
        set { set(\.httpExtraHeaders, newValue, "HTTPExtraHeaders") }
    }

    /// How long a poll may wait for data (polling only). Default 19,000 ms; ≥ 0; next poll.
    public var idleTimeout: Millis {
        get { get(\.idleTimeout) }
        set {
            precondition(newValue >= 0, "idleTimeout must be greater than or equal to zero")
            set(\.idleTimeout, newValue, "idleTimeout")
        }
    }

    /// Keepalive interval requested to the server (streaming only). Default 0 (server decides);
    /// ≥ 0; next bind.
    public var keepaliveInterval: Millis {
        get { get(\.keepaliveInterval) }
        set {
            precondition(newValue >= 0, "keepaliveInterval must be greater than or equal to zero")
            set(\.keepaliveInterval, newValue, "keepaliveInterval")
        }
    }

    /// Bandwidth limit requested for the session. Default `.unlimited`; `.limited(x)` needs
    /// x > 0. Changed on the fly (constrain) when connected.
    public var requestedMaxBandwidth: RequestedMaxBandwidth {
        get { get(\.requestedMaxBandwidth) }
        set {
            if case .limited(let v) = newValue { precondition(v > 0, "requestedMaxBandwidth must be greater than zero") }
            set(\.requestedMaxBandwidth, newValue, "requestedMaxBandwidth")
        }
    }

    /// Bandwidth limit the server applies (CONS); nil until a session reports it.
    public var realMaxBandwidth: RealMaxBandwidth? { lock.withLock { real } }

    func setRealMaxBandwidth(_ v: RealMaxBandwidth?) { lock.withLock { real = v } }

    /// Polling interval. Default 0; ≥ 0; next poll.
    public var pollingInterval: Millis {
        get { get(\.pollingInterval) }
        set {
            precondition(newValue >= 0, "pollingInterval must be greater than or equal to zero")
            set(\.pollingInterval, newValue, "pollingInterval")
        }
    }

    /// Time in STALLED before giving up the connection. Default 3,000 ms; > 0.
    public var reconnectTimeout: Millis {
        get { get(\.reconnectTimeout) }
        set {
            precondition(newValue > 0, "reconnectTimeout must be greater than zero")
            set(\.reconnectTimeout, newValue, "reconnectTimeout")
        }
    }

    /// Minimum delay between connection attempts and timeout of unanswered requests.
    /// Default 4,000 ms; > 0.
    public var retryDelay: Millis {
        get { get(\.retryDelay) }
        set {
            precondition(newValue > 0, "retryDelay must be greater than zero")
            set(\.retryDelay, newValue, "retryDelay")
        }
    }

    /// Reverse heartbeat interval. Default 0 (off); ≥ 0; obeyed at once.
    public var reverseHeartbeatInterval: Millis {
        get { get(\.reverseHeartbeatInterval) }
        set {
            precondition(newValue >= 0, "reverseHeartbeatInterval must be greater than or equal to zero")
            set(\.reverseHeartbeatInterval, newValue, "reverseHeartbeatInterval")
        }
    }

    /// How long to try recovering a session before creating a new one. Default 15,000 ms;
    /// ≥ 0 (0 disables recovery).
    public var sessionRecoveryTimeout: Millis {
        get { get(\.sessionRecoveryTimeout) }
        set {
            precondition(newValue >= 0, "sessionRecoveryTimeout must be greater than or equal to zero")
            set(\.sessionRecoveryTimeout, newValue, "sessionRecoveryTimeout")
        }
    }

    /// Extra wait after a missing keepalive before STALLED. Default 2,000 ms; > 0.
    public var stalledTimeout: Millis {
        get { get(\.stalledTimeout) }
        set {
            precondition(newValue > 0, "stalledTimeout must be greater than zero")
            set(\.stalledTimeout, newValue, "stalledTimeout")
        }
    }

    /// Send `HTTPExtraHeaders` only when creating sessions. Default false.
    public var HTTPExtraHeadersOnSessionCreationOnly: Bool {
        get { get(\.httpExtraHeadersOnSessionCreationOnly) }
        set { set(\.httpExtraHeadersOnSessionCreationOnly, newValue, "HTTPExtraHeadersOnSessionCreationOnly") }
    }

    /// Ignore the server instance address (control link) of CONOK. Default false; next session.
    public var serverInstanceAddressIgnored: Bool {
        get { get(\.serverInstanceAddressIgnored) }
        set { set(\.serverInstanceAddressIgnored, newValue, "serverInstanceAddressIgnored") }
    }

    /// The slowing algorithm (SYNC-based switch to polling). Default false; next connection.
    public var slowingEnabled: Bool {
        get { get(\.slowingEnabled) }
        set { set(\.slowingEnabled, newValue, "slowingEnabled") }
    }

    public var description: String {
        let v = snapshot
        let r = realMaxBandwidth
        var parts: [String] = []
        parts.append("forcedTransport: \(v.forcedTransport?.rawValue ?? "nil")")
        parts.append("requestedMaxBandwidth: \(v.requestedMaxBandwidth)")
        parts.append("realMaxBandwidth: \(r.map { "\($0)" } ?? "nil")")
        parts.append("retryDelay: \(v.retryDelay)")
        parts.append("firstRetryMaxDelay: \(v.firstRetryMaxDelay)")
        parts.append("sessionRecoveryTimeout: \(v.sessionRecoveryTimeout)")
        parts.append("reverseHeartbeatInterval: \(v.reverseHeartbeatInterval)")
        parts.append("stalledTimeout: \(v.stalledTimeout)")
        parts.append("reconnectTimeout: \(v.reconnectTimeout)")
        parts.append("keepaliveInterval: \(v.keepaliveInterval)")
        parts.append("pollingInterval: \(v.pollingInterval)")
        parts.append("idleTimeout: \(v.idleTimeout)")
        parts.append("contentLength: \(v.contentLength)")
        parts.append("slowingEnabled: \(v.slowingEnabled)")
        parts.append("serverInstanceAddressIgnored: \(v.serverInstanceAddressIgnored)")
        parts.append("HTTPExtraHeadersOnSessionCreationOnly: \(v.httpExtraHeadersOnSessionCreationOnly)")
        parts.append("HTTPExtraHeaders: \(v.httpExtraHeaders.map { "\($0)" } ?? "nil")")
        return "{" + parts.joined(separator: ", ") + "}"
    }
}
