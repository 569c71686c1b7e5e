/// What a TLCP client sees when a remote Metadata Adapter refuses or fails a request
/// (docs/ARI.md, "What the client sees"). Codes are those of TLCP's tables: CONERR uses the
/// session codes, REQERR and MSGFAIL the control codes.
public enum ARIClientOutcome: Sendable, Hashable {
    /// Session creation refused.
    case conerr(code: Int, message: String)
    /// A control request (subscription, MPN operation) refused.
    case reqerr(code: Int, message: String)
    /// A client message refused.
    case msgfail(code: Int, message: String)
    /// No code goes to a client (inits, data requests, close notifications): logged only.
    case notClientVisible

    /// The outcome of an error reply to `method`.
    public static func forError(_ error: ARIErrorReply, on method: ARIMethod) -> ARIClientOutcome {
        switch method {
        case .notifyUser, .notifyUserAuth:
            switch error {
            case .credits(_, let code, let user), .conflictingSession(_, let code, let user, _):
                return .conerr(code: adapterCode(code, otherwise: 1), message: user ?? "")
            case .access(let m): return .conerr(code: 1, message: m ?? "Access refused")
            case .resourceUnavailable(let m): return .conerr(code: 6, message: m ?? "Retry later")
            default: return .conerr(code: 66, message: "Metadata Adapter error")
            }
        case .notifyNewSession:
            switch error {
            case .credits(_, let code, let user), .conflictingSession(_, let code, let user, _):
                return .conerr(code: adapterCode(code, otherwise: 1), message: user ?? "")
            default: return .conerr(code: 66, message: "Metadata Adapter error")
            }
        case .getItems:
            if case .items(let m) = error { return .reqerr(code: 21, message: m ?? "Bad item group") }
            return .reqerr(code: 66, message: "Metadata Adapter error")
        case .getSchema:
            switch error {
            case .items(let m): return .reqerr(code: 22, message: m ?? "Bad item group for this schema")
            case .schema(let m): return .reqerr(code: 23, message: m ?? "Bad field schema")
            default: return .reqerr(code: 66, message: "Metadata Adapter error")
            }
        case .getItemData, .getUserItemData, .notifyNewTables, .mpnDeviceAccess, .mpnSubscriptionActivation,
            .mpnDeviceTokenChange:
            switch error {
            case .credits(_, let code, let user), .conflictingSession(_, let code, let user, _):
                return .reqerr(code: adapterCode(code, otherwise: 0), message: user ?? "")
            default: return .reqerr(code: 66, message: "Metadata Adapter error")
            }
        case .notifyUserMessage:
            switch error {
            case .credits(_, let code, let user), .conflictingSession(_, let code, let user, _):
                return .msgfail(code: adapterCode(code, otherwise: 0), message: user ?? "")
            case .notification(let m): return .msgfail(code: 34, message: m ?? "Message refused")
            default: return .msgfail(code: 35, message: "Metadata Adapter error")
            }
        default:
            return .notClientVisible
        }
    }

    /// The outcome when a request got no reply in time, or an unreadable one.
    public static func forNoReply(on method: ARIMethod) -> ARIClientOutcome {
        switch method {
        case .notifyUser, .notifyUserAuth: return .conerr(code: 6, message: "Metadata Adapter not answering, retry later")
        case .notifyNewSession: return .conerr(code: 66, message: "Metadata Adapter not answering")
        case .getItems, .getSchema, .getItemData, .getUserItemData, .notifyNewTables, .mpnDeviceAccess,
            .mpnSubscriptionActivation, .mpnDeviceTokenChange:
            return .reqerr(code: 68, message: "Metadata Adapter not answering")
        case .notifyUserMessage: return .msgfail(code: 35, message: "Metadata Adapter not answering")
        default: return .notClientVisible
        }
    }

    /// An adapter's own code: ≤ 0 reaches the client unchanged (within what a 32-bit client
    /// reads); a positive code would collide with the server's, so `otherwise` replaces it.
    static func adapterCode(_ code: Int, otherwise: Int) -> Int {
        code > 0 ? otherwise : max(code, Int(Int32.min))
    }
}
