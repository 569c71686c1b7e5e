import TLCP

/// One subscription (`LS_subId`) of a session, as the session state machine tracks it.
struct SessionTable: Sendable {
    enum State: Sendable {
        /// The add is being resolved and subscribed; events that arrive meanwhile wait.
        case subscribing
        case active
        /// `delete` accepted; UNSUB goes out when the engine confirms.
        case unsubscribing
    }

    var parameters: SubscribeParameters
    var state: State = .subscribing
    /// Who asked for it, and how to answer.
    var origin: RequestOrigin
    var requestId: String?
    var ack: Bool
    /// A delete arrived while the add was still being handled.
    var deleteRequested = false
    /// Waiting for the engine's answer to the add (its events wait in `early`).
    var isSubscribing: Bool { if case .subscribing = state { true } else { false } }
    /// Subscribing or active (not on its way out).
    var isLive: Bool { if case .unsubscribing = state { false } else { true } }
    var grant: SubscriptionGrant?
    /// Events delivered before the subscription was confirmed.
    var early: [TableEvent] = []
    /// The last row sent per item (index item-1), what "unchanged" refers to.
    var rows: [SentRow?] = []
    /// While the session has no stream: the latest row of each item not yet put in the log
    /// (index item-1), for subscriptions that fold (`foldsWhileUnbound`). Empty, without a
    /// buffer, when nothing is held (see `SessionStateMachine+Held.swift`).
    var held: [[String?]?] = []
    /// MERGE, not `unfiltered`, and no buffer of more than one update asked
    /// (`LS_requested_buffer_size`): only each item's latest values are owed, so the updates
    /// of a session without a stream fold into one per item.
    var foldsWhileUnbound: Bool {
        guard parameters.mode == .merge, parameters.maxFrequency != .unfiltered else { return false }
        switch parameters.bufferSize {
        case nil, .size(1): return true
        case .size, .unlimited: return false
        }
    }
    /// A reconf waiting for the engine.
    var pendingReconf: (origin: RequestOrigin, requestId: String, ack: Bool)?

    init(parameters: SubscribeParameters, origin: RequestOrigin, requestId: String?, ack: Bool) {
        self.parameters = parameters
        self.origin = origin
        self.requestId = requestId
        self.ack = ack
    }
}

/// The state of one message sequence (`LS_sequence`).
struct MessageSequenceState: Sendable {
    /// The progressive to handle next.
    var next = 1
    /// A message of this sequence is with the Metadata Adapter.
    var busy = false
    /// Messages waiting for their turn, by progressive.
    var queued: [Int: (text: String, outcome: Bool)] = [:]
    var maxWaitMillis: Int?
    var waitArmed = false
}

/// A message handed to the Metadata Adapter, waiting for its outcome.
struct PendingMessage: Sendable {
    var sequence: String?
    var progressive: Int?
    var wantsOutcome: Bool
}
