import TLCP

/// Identifies one network connection (a WS, or one HTTP request/response) for the session
/// state machine. The I/O layer maps ids to real channels.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    /// The number the I/O layer gave the connection.
    public var raw: UInt64
    /// An id from its number.
    public init(_ raw: UInt64) { self.raw = raw }
    /// `conn#<raw>`.
    public var description: String { "conn#\(raw)" }
}

/// The transport a request or stream travels on.
public enum TransportKind: Sendable, Hashable {
    /// WebSocket.
    case webSocket
    /// HTTP.
    case http
}

/// Where a control, message or heartbeat came from, which decides where its reply goes.
public enum RequestOrigin: Sendable, Hashable {
    /// A WS: replies are written on that socket, in order with everything else on it.
    case webSocket(ConnectionID)
    /// Line `index` of an HTTP `control.txt`/`msg.txt`/`heartbeat.txt` request: the reply goes
    /// into that HTTP response (one reply per line, even with `LS_ack=false`).
    case http(ConnectionID, index: Int)
    /// A control part of a create+control combo: no reply of its own.
    case combo
}

/// Timers a session arms. Arming a timer that is armed replaces it.
public enum SessionTimer: Sendable, Hashable {
    /// Silence on the stream: send PROBE.
    case keepalive
    /// Periodic SYNC on streams that want it.
    case sync
    /// A poll waited `LS_idle_millis` with nothing to send.
    case pollIdle
    /// Data arrived for a waiting poll: answer it after a short coalescing delay.
    case pollFlush
    /// The session has been unbound too long.
    case unboundTimeout
    /// The bandwidth limit allows more data from this time on.
    case bandwidth
    /// The client promised requests every `LS_inactivity_millis`.
    case inactivity
    /// Missing message progressives of a sequence waited long enough.
    case messageWait(sequence: String)
}

/// What the Metadata Adapter and item engine granted for one `add`.
public struct SubscriptionGrant: Sendable, Hashable {
    /// How many items the subscription has.
    public var itemCount: Int
    /// How many fields the subscription has.
    public var fieldCount: Int
    /// 1-based; COMMAND mode only.
    public var keyPosition: Int?
    /// 1-based position of the `command` field; COMMAND mode only.
    public var commandPosition: Int?
    /// The frequency limit granted (sent to the client in `CONF`).
    public var maxFrequency: GrantedFrequency
    /// False for `unfiltered` subscriptions (and RAW).
    public var filtered: Bool

    /// A grant with its properties.
    public init(itemCount: Int, fieldCount: Int, keyPosition: Int? = nil, commandPosition: Int? = nil,
                maxFrequency: GrantedFrequency = .unlimited, filtered: Bool = true) {
        self.itemCount = itemCount
        self.fieldCount = fieldCount
        self.keyPosition = keyPosition
        self.commandPosition = commandPosition
        self.maxFrequency = maxFrequency
        self.filtered = filtered
    }
}

/// A refusal with a protocol code (REQERR/MSGFAIL/CONERR).
public struct SessionRefusal: Error, Sendable, Hashable {
    /// The protocol code the client sees.
    public var code: Int
    /// The message the client sees.
    public var message: String
    /// A refusal with its code and message.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }
}

/// One client message handed to the Metadata Adapter.
public struct MessageDispatch: Sendable, Hashable {
    /// Identifies the message in `messageHandled`.
    public var id: Int
    /// nil for messages outside any sequence.
    public var sequence: String?
    /// The message's progressive within its sequence (`LS_msg_prog`), if any.
    public var progressive: Int?
    /// The message text.
    public var text: String
}

/// Why a session ended.
public enum SessionCloseReason: Sendable, Hashable {
    /// Destroyed (by the client's request or an administrator), with the cause the client sees.
    case destroyed(code: Int, message: String)
    /// Unbound for longer than the session timeout.
    case timedOut
    /// The server is shutting down.
    case serverShutdown
    /// The control part of a create+control request failed.
    case comboFailed
    /// Closed because of an error, with its code and message.
    case error(code: Int, message: String)
    /// More undelivered data than `SessionSettings.maxBacklogBytes` (a client that does not read
    /// or does not come back).
    case backlogExceeded
}

/// What the state machine asks the I/O layer to do, in order.
public enum SessionAction: Sendable, Hashable {
    /// Write text (whole CR-LF terminated lines) on a connection. `updates` counts the `U`
    /// lines in it, for metrics.
    case write(ConnectionID, String, updates: Int)
    /// The stream on this connection is over (after LOOP, END, CONERR, or silently when a new
    /// bind took the session over). HTTP: end the response. WS: the socket stays open for more
    /// requests unless `closeSocket`.
    case endStream(ConnectionID, closeSocket: Bool)
    /// The reply to line `index` of an HTTP request (nil: this line has no reply line).
    case httpReply(ConnectionID, index: Int, line: String?)
    /// Arm `timer` to fire at `atMillis` (replacing it if armed), then call `timerFired`.
    case armTimer(SessionTimer, atMillis: Int64)
    /// Cancel `timer` if it is armed.
    case cancelTimer(SessionTimer)
    /// Resolve the add with the Metadata Adapter and subscribe it in the item engine; answer with
    /// `subscribeSucceeded` or `subscribeFailed`.
    case subscribe(subscriptionId: Int, SubscribeParameters)
    /// Unsubscribe from the engine; answer with `unsubscribed` (ignored once the session is
    /// closed).
    case unsubscribe(subscriptionId: Int)
    /// Change the frequency in the engine; answer with `reconfigured`.
    case reconfigure(subscriptionId: Int, RequestedFrequency)
    /// Hand a message to the Metadata Adapter; answer with `messageHandled`.
    case handleMessage(MessageDispatch)
    /// Hand an MPN operation to the MPN Module; answer with `mpnHandled`.
    case handleMPN(MPNDispatch)
    /// The session is over: drop it from the registry and tell the Metadata Adapter.
    case sessionClosed(SessionCloseReason)
}
