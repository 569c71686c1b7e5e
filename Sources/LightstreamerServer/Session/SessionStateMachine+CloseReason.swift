extension SessionStateMachine {
    /// Why a session ended.
    public enum CloseReason: Sendable, Hashable {
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
}

/// The short name of `SessionStateMachine.CloseReason`.
public typealias SessionCloseReason = SessionStateMachine.CloseReason
