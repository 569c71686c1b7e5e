import TLCP

extension SessionEngine {
    /// Timers the engine arms; the runtime fires them back as events.
    enum Timer: Hashable, Sendable {
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
}
