import TLCP

extension MPNEngine {
    /// The engine's view of one MPN subscription object.
    struct SubscriptionState: Sendable, Equatable {
        var status: MPNSubscription.Status = .UNKNOWN
        var timestamp: Int64 = 0
        var id: String?
        var server: ServerValues?
        /// Made by the application (not discovered on the server).
        var userMade: Bool
        var request: MPNRequest?
        /// The `LS_subId` of the activation awaiting MPNOK (given by the session engine when the
        /// request is built, from the counter `add` uses).
        var activationSubId: Int?
        /// The token of the activation sent and not yet answered.
        var activationToken: Int?
        /// Changes asked while the id was not known yet, sent after MPNOK.
        var pendingFormat: String??
        var pendingTrigger: String??
        var deactivateAfterActivation = false
        /// Went UNKNOWN because the session ended, id kept: the next `SUBS-` snapshot restores it
        /// or removes it.
        var disconnected = false
    }
}
