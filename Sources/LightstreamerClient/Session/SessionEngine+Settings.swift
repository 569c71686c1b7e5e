import TLCP

extension SessionEngine {
    /// Everything the engine needs from `ConnectionDetails` and `ConnectionOptions`, by value.
    struct Settings: Sendable, Equatable {
        var serverAddress: String?
        var adapterSet: String?
        var user: String?
        var password: String?

        var contentLength: UInt64 = 50_000_000
        var firstRetryMaxDelay: Int = 100
        var forcedTransport: TransportSelection?
        var httpExtraHeaders: [String: String]?
        var httpExtraHeadersOnSessionCreationOnly = false
        var idleTimeout: Int = 19_000
        var keepaliveInterval: Int = 0
        var requestedMaxBandwidth: RequestedMaxBandwidth = .unlimited
        var pollingInterval: Int = 0
        var reconnectTimeout: Int = 3_000
        var retryDelay: Int = 4_000
        var reverseHeartbeatInterval: Int = 0
        var sessionRecoveryTimeout: Int = 15_000
        var stalledTimeout: Int = 2_000
        var serverInstanceAddressIgnored = false
        var slowingEnabled = false
    }
}
