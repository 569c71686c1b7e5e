import TLCP

extension SessionEngine {
    /// What a request id was used for.
    enum RequestPurpose: Equatable {
        case add(key: Int)
        case delete(key: Int)
        case reconf(key: Int)
        case constrain
        case forceRebind
        case destroy
        case external(token: Int)
        case message(key: Int)
    }

    /// A control waiting to be sent.
    enum PendingControl: Equatable {
        case add(key: Int)
        case delete(subscriptionId: Int, key: Int)
        case reconf(key: Int)
        case constrain
        case forceRebind(cause: String)
        case external(token: Int, ControlOperation, cause: String? = nil)
    }
}
