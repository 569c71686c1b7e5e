import TLCP

/// Identifies one network connection the engine asked the runtime to open.
typealias ConnectionID = Int

/// The four ways a session can receive its data.
enum StreamTransport: String, Sendable, Hashable {
    case wsStreaming = "WS-STREAMING"
    case httpStreaming = "HTTP-STREAMING"
    case wsPolling = "WS-POLLING"
    case httpPolling = "HTTP-POLLING"

    var isWebSocket: Bool { self == .wsStreaming || self == .wsPolling }
    var isPolling: Bool { self == .wsPolling || self == .httpPolling }

    var connectedStatus: ClientStatus {
        switch self {
        case .wsStreaming: return .connectedWSStreaming
        case .httpStreaming: return .connectedHTTPStreaming
        case .wsPolling: return .connectedWSPolling
        case .httpPolling: return .connectedHTTPPolling
        }
    }

    /// The cause prefix official clients use in `LS_cause` (`ws.…` or `http.…`).
    var causePrefix: String { isWebSocket ? "ws" : "http" }
}

/// The client status, engine side (mirrors `LightstreamerClient.Status`).
enum ClientStatus: String, Sendable, Hashable {
    case connecting = "CONNECTING"
    case connectedStreamSensing = "CONNECTED:STREAM-SENSING"
    case connectedWSStreaming = "CONNECTED:WS-STREAMING"
    case connectedHTTPStreaming = "CONNECTED:HTTP-STREAMING"
    case connectedWSPolling = "CONNECTED:WS-POLLING"
    case connectedHTTPPolling = "CONNECTED:HTTP-POLLING"
    case stalled = "STALLED"
    case willRetry = "DISCONNECTED:WILL-RETRY"
    case tryingRecovery = "DISCONNECTED:TRYING-RECOVERY"
    case disconnected = "DISCONNECTED"

    var isDisconnected: Bool { self == .disconnected || self == .willRetry || self == .tryingRecovery }
}

/// Everything the engine needs from `ConnectionDetails` and `ConnectionOptions`, by value.
struct EngineSettings: Sendable, Equatable {
    var serverAddress: String?
    var adapterSet: String?
    var user: String?
    var password: String?

    var contentLength: UInt64 = 50_000_000
    var firstRetryMaxDelay: Int = 100
    var forcedTransport: TransportSelection?
    var httpExtraHeaders: [String: String]?
    var httpExtraHeadersOnSessionCreationOnly = false
    var idleTimeout: Int = 19_000
    var keepaliveInterval: Int = 0
    var requestedMaxBandwidth: RequestedMaxBandwidth = .unlimited
    var pollingInterval: Int = 0
    var reconnectTimeout: Int = 3_000
    var retryDelay: Int = 4_000
    var reverseHeartbeatInterval: Int = 0
    var sessionRecoveryTimeout: Int = 15_000
    var stalledTimeout: Int = 2_000
    var serverInstanceAddressIgnored = false
    var slowingEnabled = false
}

/// A subscription as the engine needs it: a value copy taken when `subscribe` is called.
struct SubscriptionSpec: Sendable, Equatable {
    var mode: SubscriptionMode
    var items: [String]?
    var itemGroup: String?
    var fields: [String]?
    var fieldSchema: String?
    var dataAdapter: String?
    var selector: String?
    var bufferSize: TLCP.RequestedBufferSize?
    var maxFrequency: RequestedFrequency?
    var snapshot: SnapshotRequest?
    var secondLevelFields: [String]?
    var secondLevelFieldSchema: String?
    var secondLevelDataAdapter: String?

    var group: String { itemGroup ?? (items ?? []).joined(separator: " ") }
    var schema: String { fieldSchema ?? (fields ?? []).joined(separator: " ") }
    var hasSecondLevel: Bool { mode == .command && (secondLevelFields != nil || secondLevelFieldSchema != nil) }
}

/// A message as the engine needs it.
struct MessageSpec: Sendable, Equatable {
    var text: String
    /// nil: not in a sequence (`UNORDERED_MESSAGES`).
    var sequence: String?
    /// ms; negative means the server default.
    var timeout: Int
    /// Whether an outcome must be reported (a delegate was given).
    var wantsOutcome: Bool
    var enqueueWhileDisconnected: Bool
}

/// What happened to a message.
enum MessageOutcome: Sendable, Equatable {
    case processed(response: String)
    case denied(code: Int, message: String)
    case discarded
    case failed
    case aborted(sentOnNetwork: Bool)
}

/// Timers the engine arms; the runtime fires them back as events.
enum TimerID: Hashable, Sendable {
    /// No answer to a create or bind in time (transport timeout).
    case transport
    /// Waiting before a new attempt to create a session.
    case retry
    /// Waiting before (another) recovery attempt.
    case recovery
    /// Silence on a stream longer than keepalive + stalledTimeout.
    case keepalive
    /// Stalled for reconnectTimeout: give up the stream.
    case reconnect
    /// Waiting for the next poll.
    case poll
    /// Reverse heartbeat.
    case reverseHeartbeat
}

/// Events into the engine.
enum EngineEvent: Sendable {
    case connect
    case disconnect
    case settingsChanged(EngineSettings, property: String)
    case subscribe(key: Int, spec: SubscriptionSpec)
    case unsubscribe(key: Int)
    case changeFrequency(key: Int, RequestedFrequency?)
    case sendMessage(key: Int, MessageSpec)
    /// A control operation from an extension (MPN); its reply is reported with the token.
    /// `session`: the session it was made for; if another one is current (or none), it is
    /// handed back at once (`externalDropped`, not sent). nil: whichever session comes.
    case externalControl(token: Int, operation: ControlOperation, cause: String? = nil, session: String? = nil)
    /// Several external controls at once: they can share one batch (one WS message or one
    /// HTTP control request).
    case externalControls([ExternalControl])
    case webSocketOpened(ConnectionID)
    case lineReceived(ConnectionID, String)
    /// The connection ended in an orderly way (HTTP body complete, WS closed by peer).
    case connectionClosed(ConnectionID)
    case connectionFailed(ConnectionID, String)
    /// The connection was refused locally for good (62: the server's TLS key is not among
    /// the certificate pins): the client stops, reporting the code as a server error.
    case connectionRejected(ConnectionID, code: Int, message: String)
    case timerFired(TimerID)
}

/// A control operation from an extension (MPN).
struct ExternalControl: Sendable, Equatable {
    var token: Int
    var operation: ControlOperation
    var cause: String?
    /// The session it was made for (see `EngineEvent.externalControl`).
    var session: String?
}

/// Subscription events for the application.
enum SubscriptionEvent: Sendable {
    case subscribed(itemCount: Int, fieldCount: Int, keyPosition: Int?, commandPosition: Int?)
    case unsubscribed
    case failed(code: Int, message: String?)
    case update(ItemUpdateValue)
    case endOfSnapshot(itemName: String?, itemPos: Int)
    case clearSnapshot(itemName: String?, itemPos: Int)
    case lostUpdates(itemName: String?, itemPos: Int, count: Int)
    case realFrequency(RealMaxFrequency?)
    case secondLevelFailed(key: String, code: Int, message: String?)
    case secondLevelLostUpdates(key: String, count: Int)
}

/// A server-driven property change.
enum ServerProperty: Sendable, Equatable {
    case sessionId(String?)
    case serverInstanceAddress(String?)
    case serverSocketName(String?)
    case clientIp(String?)
    case realMaxBandwidth(RealMaxBandwidth?)

    var name: String {
        switch self {
        case .sessionId: return "sessionId"
        case .serverInstanceAddress: return "serverInstanceAddress"
        case .serverSocketName: return "serverSocketName"
        case .clientIp: return "clientIp"
        case .realMaxBandwidth: return "realMaxBandwidth"
        }
    }
}

/// What the engine tells the application.
enum AppNotification: Sendable {
    case status(ClientStatus)
    case serverError(code: Int, message: String)
    case property(ServerProperty)
    case subscription(key: Int, SubscriptionEvent)
    case message(key: Int, MessageOutcome)
    /// Reply to an external (MPN) control: nil code means REQOK.
    case externalReply(token: Int, code: Int?, message: String?)
    /// An MPN notification, for the MPN extension.
    case mpn(TLCPNotification)
    /// A new session started (the MPN extension re-registers devices).
    case sessionStarted(id: String)
    /// The session ended (closed, lost or abandoned): extension requests of that session were
    /// reported with `externalDropped` just before.
    case sessionEnded
    /// An external control did not outlive its session: `sent` tells whether it went on the
    /// network (its outcome is unknown) or was still queued.
    case externalDropped(token: Int, sent: Bool)
    /// An external `activate` got its `LS_subId` from the session's subscription counter (ids
    /// are shared with `add`, so they never collide); MPNOK refers to it.
    case externalSubscriptionId(token: Int, subscriptionId: Int)
}

/// Actions out of the engine, executed by the runtime in order.
enum EngineAction: Sendable {
    case openWebSocket(ConnectionID, url: String, headers: [String: String])
    case sendWebSocket(ConnectionID, String)
    /// POST `body` to `url`; the response body arrives as `lineReceived`, then `connectionClosed`.
    case httpPost(ConnectionID, url: String, body: String, headers: [String: String])
    case close(ConnectionID)
    case schedule(TimerID, after: Int)
    case cancel(TimerID)
    case notify(AppNotification)
    case log(LogLevel, String)
}

enum LogLevel: Sendable { case debug, info, warn, error }
