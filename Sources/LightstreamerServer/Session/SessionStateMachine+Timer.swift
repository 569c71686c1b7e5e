extension SessionStateMachine {
    /// Timers a session arms. Arming a timer that is armed replaces it.
    public enum Timer: Sendable, Hashable {
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
}

/// The short name of `SessionStateMachine.Timer`.
public typealias SessionTimer = SessionStateMachine.Timer
