/// An error reply from a remote adapter: the SDK exception that its adapter threw, with the
/// exception's message (docs/ARI.md, "Error replies").
public enum ARIErrorReply: Error, Sendable, Hashable {
    /// `E`: any other (unchecked) exception.
    case generic(message: String?)
    /// `ED`: DataProviderException (DPI).
    case dataProvider(message: String?)
    /// `EU`: SubscriptionException (SUB, USB).
    case subscription(message: String?)
    /// `EF`: FailureException (SUB, USB).
    case failure(message: String?)
    /// `EM`: MetadataProviderException (MPI).
    case metadataProvider(message: String?)
    /// `EN`: NotificationException.
    case notification(message: String?)
    /// `EA`: AccessException (NUS, NUA).
    case access(message: String?)
    /// `ER`: ResourceUnavailableException, credentials cannot be checked now (1.9, NUS, NUA).
    case resourceUnavailable(message: String?)
    /// `EI`: ItemsException (GIS, GSC).
    case items(message: String?)
    /// `ES`: SchemaException (GSC).
    case schema(message: String?)
    /// `EC`: CreditsException; `code` is the adapter's (≤ 0 by contract) and `userMessage` is
    /// meant for the client.
    case credits(message: String?, code: Int, userMessage: String?)
    /// `EX`: ConflictingSessionException, a CreditsException naming a session to close.
    case conflictingSession(message: String?, code: Int, userMessage: String?, sessionId: String?)

    /// The reply marker (`E`, `ED`, …).
    public var tag: String {
        switch self {
        case .generic: return "E"
        case .dataProvider: return "ED"
        case .subscription: return "EU"
        case .failure: return "EF"
        case .metadataProvider: return "EM"
        case .notification: return "EN"
        case .access: return "EA"
        case .resourceUnavailable: return "ER"
        case .items: return "EI"
        case .schema: return "ES"
        case .credits: return "EC"
        case .conflictingSession: return "EX"
        }
    }

    /// The exception's message (for logs; the client sees `userMessage` or a fixed text).
    public var message: String? {
        switch self {
        case .generic(let m), .dataProvider(let m), .subscription(let m), .failure(let m), .metadataProvider(let m),
            .notification(let m), .access(let m), .resourceUnavailable(let m), .items(let m), .schema(let m),
            .credits(let m, _, _), .conflictingSession(let m, _, _, _):
            return m
        }
    }

    /// Whether `token` is an error marker.
    static func isTag(_ token: Substring) -> Bool {
        token.utf8.first == UInt8(ascii: "E") && token.utf8.count <= 2
    }

    func write(to w: inout ARILineWriter) {
        w.raw(tag)
        w.raw(ARIStringCoding.encode(message))
        switch self {
        case .credits(_, let code, let userMessage):
            w.raw(String(code))
            w.raw(ARIStringCoding.encode(userMessage))
        case .conflictingSession(_, let code, let userMessage, let sessionId):
            w.raw(String(code))
            w.raw(ARIStringCoding.encode(userMessage))
            w.raw(ARIStringCoding.encode(sessionId))
        default:
            break
        }
    }

    /// Reads an error marker and what follows it. A missing message is nil (an SDK sends `#` or
    /// an encoded text, but a bare marker costs nothing to accept).
    static func read(from r: inout ARIArgumentReader) throws(ARIProtocolError) -> ARIErrorReply {
        let tag = try r.token("error marker")
        let message = try r.isAtEnd ? nil : ARIStringCoding.decode(r.token("error message"))
        switch tag {
        case "E": return .generic(message: message)
        case "ED": return .dataProvider(message: message)
        case "EU": return .subscription(message: message)
        case "EF": return .failure(message: message)
        case "EM": return .metadataProvider(message: message)
        case "EN": return .notification(message: message)
        case "EA": return .access(message: message)
        case "ER": return .resourceUnavailable(message: message)
        case "EI": return .items(message: message)
        case "ES": return .schema(message: message)
        case "EC":
            let code = try ARINumbers.parseInt(r.token("credits code"), type: "code", limits: r.limits)
            let userMessage = try ARIStringCoding.decode(r.token("user message"))
            return .credits(message: message, code: code, userMessage: userMessage)
        case "EX":
            let code = try ARINumbers.parseInt(r.token("credits code"), type: "code", limits: r.limits)
            let userMessage = try ARIStringCoding.decode(r.token("user message"))
            let sessionId = try ARIStringCoding.decode(r.token("session id"))
            return .conflictingSession(message: message, code: code, userMessage: userMessage, sessionId: sessionId)
        default:
            throw .badValue(type: "error", value: String(tag))
        }
    }
}
