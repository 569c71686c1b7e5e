import ARI

/// Who sends a remote Metadata Adapter its requests: the NIO connection in the server, a
/// scripted exchange in tests.
protocol RemoteRequester: Sendable {
    /// Sends `request` and waits for the reply's payload; throws `RemoteRequestFailure`.
    func request(_ request: ARIRequest) async throws -> ARIReplyPayload
}

extension RemoteAdapterConnection: RemoteRequester {}

/// A remote Metadata Adapter's failure that is not one of `MetadataError`'s refusals: the
/// server answers it with its generic code (CONERR 66, MSGFAIL 35).
public struct RemoteMetadataFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request that failed.
    public var method: ARIMethod
    /// What went wrong (a timeout, a lost connection, an unexpected reply).
    public var reason: String
    /// A line for the log.
    public var description: String { "remote Metadata Adapter, \(method.rawValue): \(reason)" }
}

/// Turns a failed request to a remote Metadata Adapter into the error the server's callers
/// already map to TLCP codes (`SessionManager.createRefusal`, `SubscriptionResolver`), so that
/// the client gets the code of `ARIClientOutcome` (docs/ARI.md, "What the client sees").
enum RemoteMetadataErrors {
    static func error(_ failure: any Error, on method: ARIMethod) -> any Error {
        let outcome: ARIClientOutcome
        let reason: String
        switch failure as? RemoteRequestFailure {
        case .refused(let e)?:
            outcome = ARIClientOutcome.forError(e, on: method)
            reason = "\(e.tag) \(e.message ?? "")"
        case .timedOut?:
            outcome = ARIClientOutcome.forNoReply(on: method)
            reason = "no reply in time"
        case .malformedReply(let m)?:
            outcome = ARIClientOutcome.forNoReply(on: method)
            reason = "unreadable reply: \(m)"
        case .unavailable?:
            outcome = ARIClientOutcome.forNoReply(on: method)
            reason = "not connected"
        case .overloaded?:
            outcome = ARIClientOutcome.forNoReply(on: method)
            reason = "too many requests waiting"
        case nil:
            outcome = ARIClientOutcome.forNoReply(on: method)
            reason = "\(failure)"
        }
        return error(outcome, method: method, reason: reason)
    }

    static func error(_ outcome: ARIClientOutcome, method: ARIMethod, reason: String) -> any Error {
        let generic = RemoteMetadataFailure(method: method, reason: reason)
        switch outcome {
        case .conerr(let code, let message):
            switch code {
            case 6: return MetadataError.retryLater(message: message)
            case 66: return generic
            default: return MetadataError.access(code: code, message: message)
            }
        case .reqerr(let code, let message):
            switch code {
            case 21: return MetadataError.itemsNotFound(message: message)
            case 23: return MetadataError.schemaNotFound(message: message)
            // The resolver and the MPN Module pass a `.subscription` code through.
            default: return MetadataError.subscription(code: code, message: message)
            }
        case .msgfail(let code, let message):
            switch code {
            case 34: return MetadataError.notification(message: message)
            case 35: return generic
            default: return MetadataError.message(code: code, message: message)
            }
        case .notClientVisible:
            return generic
        }
    }
}
