import TLCP

extension MPNEngine {
    /// The device as the engine needs it.
    struct DeviceInfo: Sendable, Equatable {
        var platform: MPNPlatform
        var applicationId: String
        var token: String
        /// The stored previous token, when it differs from `token`.
        var previousToken: String?
    }
}
