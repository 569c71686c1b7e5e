import TLCP

extension SessionEngine {
    /// A message as the engine needs it.
    struct MessageSpec: Sendable, Equatable {
        var text: String
        /// nil: not in a sequence (`UNORDERED_MESSAGES`).
        var sequence: String?
        /// ms; negative means the server default.
        var timeout: Int
        /// Whether an outcome must be reported (a delegate was given).
        var wantsOutcome: Bool
        var enqueueWhileDisconnected: Bool
    }
}
