import TLCP

extension SessionEngine {
    /// A server-driven property change.
    enum ServerProperty: Sendable, Equatable {
        case sessionId(String?)
        case serverInstanceAddress(String?)
        case serverSocketName(String?)
        case clientIp(String?)
        case realMaxBandwidth(RealMaxBandwidth?)

        var name: String {
            switch self {
            case .sessionId: return "sessionId"
            case .serverInstanceAddress: return "serverInstanceAddress"
            case .serverSocketName: return "serverSocketName"
            case .clientIp: return "clientIp"
            case .realMaxBandwidth: return "realMaxBandwidth"
            }
        }
    }
}
