import TLCP

extension SessionEngine {
    /// What happened to a message.
    enum MessageOutcome: Sendable, Equatable {
        case processed(response: String)
        case denied(code: Int, message: String)
        case discarded
        case failed
        case aborted(sentOnNetwork: Bool)
    }
}
