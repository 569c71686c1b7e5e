import TLCP

extension SessionEngine {
    /// A control operation from an extension (MPN).
    struct ExternalControl: Sendable, Equatable {
        var token: Int
        var operation: ControlOperation
        var cause: String?
        /// The session it was made for (see `Event.externalControl`).
        var session: String?
    }
}
