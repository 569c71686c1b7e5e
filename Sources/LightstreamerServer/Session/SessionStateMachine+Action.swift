import TLCP

extension SessionStateMachine {
    /// What the state machine asks the I/O layer to do, in order.
    public enum Action: Sendable, Hashable {
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
        case armTimer(Timer, atMillis: Int64)
        /// Cancel `timer` if it is armed.
        case cancelTimer(Timer)
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
        case sessionClosed(CloseReason)
    }
}

/// The short name of `SessionStateMachine.Action`.
public typealias SessionAction = SessionStateMachine.Action
