import Foundation
import NIOConcurrencyHelpers

/// Connection policy of a `LightstreamerClient` (docs/protocol/CLIENT-API.md §6). Every setter
/// checks the documented precondition (a trap, as in the official API), fires
/// `client(_:didChangeProperty:)` only when the value changes, and takes effect as in the
/// official API: at once (forcedTransport, requestedMaxBandwidth, reverseHeartbeatInterval,
/// timeouts) or on the next bind/poll/create (contentLength, keepaliveInterval, idleTimeout,
/// pollingInterval, slowingEnabled, serverInstanceAddressIgnored).
public final class ConnectionOptions: CustomStringConvertible, Sendable {
    /// The mutable state, only touched under the box's lock.
    private struct State {
        var values = SessionEngine.Settings()
        var real: RealMaxBandwidth?
        weak var core: ClientCore?
    }

    private let state = NIOLockedValueBox(State())

    /// The client whose engine gets the changes.
    var core: ClientCore? {
        get { state.withLockedValue { $0.core } }
        set { state.withLockedValue { $0.core = newValue } }
    }

    init() {}

    /// The engine's view of the options (merged into the details' values by the client).
    var snapshot: SessionEngine.Settings { state.withLockedValue { $0.values } }

    /// Applies `change` to the values under the lock; fires the property event when `changed`
    /// says the value differs.
    private func update(_ name: String, _ change: (inout SessionEngine.Settings) -> Bool) {
        let changed: Bool = state.withLockedValue { change(&$0.values) }
        if changed { core?.optionChanged(name) }
    }

    /// Bytes of an HTTP streaming response before the server closes it (HTTP-STREAMING only).
    /// Default 50,000,000; must be > 0; used from the next bind.
    public var contentLength: UInt64 {
        get { state.withLockedValue { $0.values.contentLength } }
        set {
            precondition(newValue > 0, "contentLength must be greater than zero")
            update("contentLength") { v in
                defer { v.contentLength = newValue }
                return v.contentLength != newValue
            }
        }
    }

    /// Upper bound of the random delay before the first reconnection. Default 100 ms; > 0.
    public var firstRetryMaxDelay: Millis {
        get { state.withLockedValue { $0.values.firstRetryMaxDelay } }
        set {
            precondition(newValue > 0, "firstRetryMaxDelay must be greater than zero")
            update("firstRetryMaxDelay") { v in
                defer { v.firstRetryMaxDelay = newValue }
                return v.firstRetryMaxDelay != newValue
            }
        }
    }

    /// Forced transport, or nil for full Stream-Sense. Changing it while connected switches the
    /// transport of the live session (force_rebind).
    public var forcedTransport: TransportSelection? {
        get { state.withLockedValue { $0.values.forcedTransport } }
        set {
            update("forcedTransport") { v in
                defer { v.forcedTransport = newValue }
                return v.forcedTransport != newValue
            }
        }
    }

    /// Extra HTTP headers for every request (and the WebSocket upgrade). Default nil.
    public var HTTPExtraHeaders: [String: String]? {
        get { state.withLockedValue { $0.values.httpExtraHeaders } }
        set {
            update("HTTPExtraHeaders") { v in
                defer { v.httpExtraHeaders = newValue }
                return v.httpExtraHeaders != newValue
            }
        }
    }

    /// How long a poll may wait for data (polling only). Default 19,000 ms; ≥ 0; next poll.
    public var idleTimeout: Millis {
        get { state.withLockedValue { $0.values.idleTimeout } }
        set {
            precondition(newValue >= 0, "idleTimeout must be greater than or equal to zero")
            update("idleTimeout") { v in
                defer { v.idleTimeout = newValue }
                return v.idleTimeout != newValue
            }
        }
    }

    /// Keepalive interval requested to the server (streaming only). Default 0 (server decides);
    /// ≥ 0; next bind.
    public var keepaliveInterval: Millis {
        get { state.withLockedValue { $0.values.keepaliveInterval } }
        set {
            precondition(newValue >= 0, "keepaliveInterval must be greater than or equal to zero")
            update("keepaliveInterval") { v in
                defer { v.keepaliveInterval = newValue }
                return v.keepaliveInterval != newValue
            }
        }
    }

    /// Bandwidth limit requested for the session. Default `.unlimited`; `.limited(x)` needs
    /// x > 0. Changed on the fly (constrain) when connected.
    public var requestedMaxBandwidth: RequestedMaxBandwidth {
        get { state.withLockedValue { $0.values.requestedMaxBandwidth } }
        set {
            if case .limited(let v) = newValue { precondition(v > 0, "requestedMaxBandwidth must be greater than zero") }
            update("requestedMaxBandwidth") { v in
                defer { v.requestedMaxBandwidth = newValue }
                return v.requestedMaxBandwidth != newValue
            }
        }
    }

    /// Bandwidth limit the server applies (CONS); nil until a session reports it.
    public var realMaxBandwidth: RealMaxBandwidth? { state.withLockedValue { $0.real } }

    func setRealMaxBandwidth(_ v: RealMaxBandwidth?) { state.withLockedValue { $0.real = v } }

    /// Polling interval. Default 0; ≥ 0; next poll.
    public var pollingInterval: Millis {
        get { state.withLockedValue { $0.values.pollingInterval } }
        set {
            precondition(newValue >= 0, "pollingInterval must be greater than or equal to zero")
            update("pollingInterval") { v in
                defer { v.pollingInterval = newValue }
                return v.pollingInterval != newValue
            }
        }
    }

    /// Time in STALLED before giving up the connection. Default 3,000 ms; > 0.
    public var reconnectTimeout: Millis {
        get { state.withLockedValue { $0.values.reconnectTimeout } }
        set {
            precondition(newValue > 0, "reconnectTimeout must be greater than zero")
            update("reconnectTimeout") { v in
                defer { v.reconnectTimeout = newValue }
                return v.reconnectTimeout != newValue
            }
        }
    }

    /// Minimum delay between connection attempts and timeout of unanswered requests.
    /// Default 4,000 ms; > 0.
    public var retryDelay: Millis {
        get { state.withLockedValue { $0.values.retryDelay } }
        set {
            precondition(newValue > 0, "retryDelay must be greater than zero")
            update("retryDelay") { v in
                defer { v.retryDelay = newValue }
                return v.retryDelay != newValue
            }
        }
    }

    /// Reverse heartbeat interval. Default 0 (off); ≥ 0; obeyed at once.
    public var reverseHeartbeatInterval: Millis {
        get { state.withLockedValue { $0.values.reverseHeartbeatInterval } }
        set {
            precondition(newValue >= 0, "reverseHeartbeatInterval must be greater than or equal to zero")
            update("reverseHeartbeatInterval") { v in
                defer { v.reverseHeartbeatInterval = newValue }
                return v.reverseHeartbeatInterval != newValue
            }
        }
    }

    /// How long to try recovering a session before creating a new one. Default 15,000 ms;
    /// ≥ 0 (0 disables recovery).
    public var sessionRecoveryTimeout: Millis {
        get { state.withLockedValue { $0.values.sessionRecoveryTimeout } }
        set {
            precondition(newValue >= 0, "sessionRecoveryTimeout must be greater than or equal to zero")
            update("sessionRecoveryTimeout") { v in
                defer { v.sessionRecoveryTimeout = newValue }
                return v.sessionRecoveryTimeout != newValue
            }
        }
    }

    /// Extra wait after a missing keepalive before STALLED. Default 2,000 ms; > 0.
    public var stalledTimeout: Millis {
        get { state.withLockedValue { $0.values.stalledTimeout } }
        set {
            precondition(newValue > 0, "stalledTimeout must be greater than zero")
            update("stalledTimeout") { v in
                defer { v.stalledTimeout = newValue }
                return v.stalledTimeout != newValue
            }
        }
    }

    /// Send `HTTPExtraHeaders` only when creating sessions. Default false.
    public var HTTPExtraHeadersOnSessionCreationOnly: Bool {
        get { state.withLockedValue { $0.values.httpExtraHeadersOnSessionCreationOnly } }
        set {
            update("HTTPExtraHeadersOnSessionCreationOnly") { v in
                defer { v.httpExtraHeadersOnSessionCreationOnly = newValue }
                return v.httpExtraHeadersOnSessionCreationOnly != newValue
            }
        }
    }

    /// Ignore the server instance address (control link) of CONOK. Default false; next session.
    public var serverInstanceAddressIgnored: Bool {
        get { state.withLockedValue { $0.values.serverInstanceAddressIgnored } }
        set {
            update("serverInstanceAddressIgnored") { v in
                defer { v.serverInstanceAddressIgnored = newValue }
                return v.serverInstanceAddressIgnored != newValue
            }
        }
    }

    /// The slowing algorithm (SYNC-based switch to polling). Default false; next connection.
    public var slowingEnabled: Bool {
        get { state.withLockedValue { $0.values.slowingEnabled } }
        set {
            update("slowingEnabled") { v in
                defer { v.slowingEnabled = newValue }
                return v.slowingEnabled != newValue
            }
        }
    }

    /// `[forcedTransport: …, requestedMaxBandwidth: …, …]`: unset values, zero timeouts that
    /// mean "not set" and false flags are left out.
    public var description: String {
        let v = snapshot
        var map = DescriptionMap()
        map.add("forcedTransport", v.forcedTransport)
        map.add("requestedMaxBandwidth", v.requestedMaxBandwidth)
        map.add("realMaxBandwidth", realMaxBandwidth)
        map.add("retryDelay", v.retryDelay)
        map.add("firstRetryMaxDelay", v.firstRetryMaxDelay)
        map.addPositive("sessionRecoveryTimeout", v.sessionRecoveryTimeout)
        map.addPositive("reverseHeartbeatInterval", v.reverseHeartbeatInterval)
        map.add("stalledTimeout", v.stalledTimeout)
        map.add("reconnectTimeout", v.reconnectTimeout)
        map.addPositive("keepaliveInterval", v.keepaliveInterval)
        map.addPositive("pollingInterval", v.pollingInterval)
        map.add("idleTimeout", v.idleTimeout)
        map.add("contentLength", v.contentLength)
        map.addFlag("slowingEnabled", v.slowingEnabled)
        map.addFlag("serverInstanceAddressIgnored", v.serverInstanceAddressIgnored)
        map.addFlag("HTTPExtraHeadersOnSessionCreationOnly", v.httpExtraHeadersOnSessionCreationOnly)
        map.add("HTTPExtraHeaders", v.httpExtraHeaders)
        return map.description
    }
}
