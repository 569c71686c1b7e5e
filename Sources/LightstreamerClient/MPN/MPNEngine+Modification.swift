import TLCP

extension MPNEngine {
    /// A change asked on an active subscription.
    enum Modification: Sendable, Equatable {
        case format(String?)
        case trigger(String?)

        var propertyName: String {
            switch self {
            case .format: return "notification_format"
            case .trigger: return "trigger"
            }
        }
    }
}
