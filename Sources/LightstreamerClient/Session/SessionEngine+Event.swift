import TLCP

extension SessionEngine {
    /// Events into the engine.
    enum Event: Sendable {
        case connect
        case disconnect
        case settingsChanged(Settings, property: String)
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
        case timerFired(Timer)
    }
}
