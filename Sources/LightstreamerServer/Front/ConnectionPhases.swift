import TLCP

/// Where a connection is in its life, and which timeout applies there: the state machine behind
/// `ConnectionTimeoutHandler`, without I/O. Each event returns what to do with the one timer of
/// the connection. A response in progress (streams included) has no timeout here: sessions have
/// their own keepalives and timeouts. The machine's work ends at a WebSocket upgrade, which
/// removes its handler; the TLCP WebSocket handler then times the wait for a session
/// (`Limits.webSocketSessionMillis`, `WebSocketSessionObserver`).
struct ConnectionPhases {
    struct Limits: Sendable, Equatable {
        var tlsHandshakeMillis: Int
        var requestHeadMillis: Int
        var requestBodyMillis: Int
        var idleMillis: Int
        var webSocketSessionMillis: Int
        /// Bytes of one request head (request line and headers) before it is refused.
        var maxRequestHeadBytes: Int
    }

    enum Phase: Equatable {
        case tlsHandshake
        /// No byte of the next request yet; `first`: the connection's first request, whose head
        /// must come within the head timeout counted from the connection's start.
        case awaitingRequest(first: Bool)
        case readingHead
        case readingBody
        /// The request is in; its response (perhaps a stream) is going out.
        case responding
    }

    enum Reason: String, Equatable {
        case tlsHandshakeTimeout = "TLS handshake timeout"
        case requestHeadTimeout = "request head timeout"
        case requestBodyTimeout = "request body timeout"
        case idleTimeout = "idle connection timeout"
        /// Logged by the TLCP WebSocket handler, which times the wait for a session once the
        /// upgrade has taken this machine's handler out of the pipeline.
        case webSocketSessionTimeout = "no session request on the WebSocket"
        case requestHeadTooLarge = "request head too large"
    }

    enum Action: Equatable {
        case none
        /// Cancel the timer and start a new one; `generation` comes back with `timerFired`.
        case arm(millis: Int, generation: Int)
        case disarm
        case close(Reason)
    }

    let limits: Limits
    private(set) var phase: Phase
    private var generation = 0
    private var headBytes = 0

    init(limits: Limits, tls: Bool) {
        self.limits = limits
        phase = tls ? .tlsHandshake : .awaitingRequest(first: true)
    }

    /// The connection is up.
    mutating func start() -> Action {
        arm(phase == .tlsHandshake ? limits.tlsHandshakeMillis : limits.requestHeadMillis)
    }

    mutating func handshakeCompleted() -> Action {
        guard phase == .tlsHandshake else { return .none }
        phase = .awaitingRequest(first: true)
        return arm(limits.requestHeadMillis)
    }

    /// Bytes are about to go to the HTTP decoder.
    mutating func bytesArriving() -> Action {
        switch phase {
        case .awaitingRequest(let first):
            phase = .readingHead
            headBytes = 0
            // The first request's head timer runs from the connection's start.
            return first ? .none : arm(limits.requestHeadMillis)
        default:
            return .none
        }
    }

    /// `count` bytes went to the HTTP decoder; if the head is still incomplete they all were head.
    mutating func bytesConsumed(_ count: Int) -> Action {
        guard phase == .readingHead else { return .none }
        headBytes = Saturating.add(headBytes, count)
        return headBytes > limits.maxRequestHeadBytes ? .close(.requestHeadTooLarge) : .none
    }

    mutating func headReceived() -> Action {
        switch phase {
        case .awaitingRequest, .readingHead:
            phase = .readingBody
            return arm(limits.requestBodyMillis)
        default:
            return .none
        }
    }

    mutating func requestEnded() -> Action {
        guard phase == .readingBody else { return .none }
        phase = .responding
        return .disarm
    }

    mutating func responseEnded() -> Action {
        guard phase == .responding else { return .none }
        phase = .awaitingRequest(first: false)
        return arm(limits.idleMillis)
    }

    mutating func timerFired(generation fired: Int) -> Action {
        guard fired == generation else { return .none }
        switch phase {
        case .tlsHandshake: return .close(.tlsHandshakeTimeout)
        case .awaitingRequest(let first): return .close(first ? .requestHeadTimeout : .idleTimeout)
        case .readingHead: return .close(.requestHeadTimeout)
        case .readingBody: return .close(.requestBodyTimeout)
        case .responding: return .none
        }
    }

    private mutating func arm(_ millis: Int) -> Action {
        generation &+= 1
        return .arm(millis: millis, generation: generation)
    }
}
