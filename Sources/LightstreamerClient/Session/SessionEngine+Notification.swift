import TLCP

extension SessionEngine {
    /// What the engine tells the application.
    enum Notification: Sendable {
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
}
