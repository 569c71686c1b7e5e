/// A line the proxy sends, as a remote reads it: a request with its id, or `CLOSE`. The server
/// never parses these; they serve tests and remotes written in Swift.
public enum ARIProxyLine: Sendable, Hashable {
    case request(id: String, ARIRequest)
    case close(reason: String?)

    public static func decode(_ line: String, dialect: ARIDialect, limits: ARILimits = .default) throws(ARIProtocolError) -> ARIProxyLine {
        let tokens = try ARITokenizer.tokens(of: line, limits: limits)
        guard tokens.count >= 2 else { throw .missingMethod }
        let id = String(tokens[0])
        guard let method = ARIMethod(rawValue: String(tokens[1])) else { throw .unknownMethod(String(tokens[1])) }
        var r = ARIArgumentReader(tokens: tokens, position: 2, limits: limits)
        if method == .close {
            let pairs = try r.pairsToEnd()
            return .close(reason: pairs.first(where: { $0.name == "reason" })?.value ?? nil)
        }
        guard method.isRequest else { throw .unexpectedMethod(method.rawValue) }
        let request = try Self.request(method, &r, dialect: dialect)
        try r.finish()
        return .request(id: id, request)
    }

    private static func request(
        _ method: ARIMethod, _ r: inout ARIArgumentReader,
        dialect: ARIDialect
    ) throws(ARIProtocolError) -> ARIRequest {
        switch method {
        case .dataInit: return .dataInit(ARIInitParameters(pairs: try r.pairsToEnd()))
        case .metadataInit: return .metadataInit(ARIInitParameters(pairs: try r.pairsToEnd()))
        case .subscribe: return .subscribe(item: try r.nonNullString("item"))
        case .unsubscribe: return .unsubscribe(item: try r.nonNullString("item"))
        case .notifyUser:
            return .notifyUser(user: try r.string(), password: try r.string(), headers: try r.pairsToEnd())
        case .notifyUserAuth:
            return .notifyUserAuth(
                user: try r.string(), password: try r.string(), clientPrincipal: try r.string(),
                headers: try r.pairsToEnd())
        case .notifyNewSession:
            return .notifyNewSession(
                user: try r.string(), sessionId: try r.nonNullString("session id"),
                context: try r.pairsToEnd())
        case .notifySessionClose: return .notifySessionClose(sessionId: try r.nonNullString("session id"))
        case .getItems:
            return .getItems(
                user: try r.string(), group: try r.nonNullString("group"),
                sessionId: try r.nonNullString("session id"))
        case .getSchema:
            return .getSchema(
                user: try r.string(), group: try r.nonNullString("group"),
                schema: try r.nonNullString("schema"), sessionId: try r.nonNullString("session id"))
        case .getItemData: return .getItemData(items: try Self.names(&r))
        case .getUserItemData:
            let user = try r.string()
            return .getUserItemData(user: user, items: try Self.names(&r))
        case .notifyUserMessage:
            return .notifyUserMessage(
                user: try r.string(), sessionId: try r.nonNullString("session id"),
                message: try r.nonNullString("message"))
        case .notifyNewTables:
            let user = try r.string()
            let session = try r.nonNullString("session id")
            return .notifyNewTables(user: user, sessionId: session, tables: try Self.tables(&r, dialect, .newTable))
        case .notifyTablesClose:
            let session = try r.nonNullString("session id")
            return .notifyTablesClose(sessionId: session, tables: try Self.tables(&r, dialect, .closedTable))
        case .mpnDeviceAccess:
            return .mpnDeviceAccess(
                user: try r.string(), sessionId: try r.nonNullString("session id"),
                device: try ARIMPNDevice.read(from: &r))
        case .mpnSubscriptionActivation:
            let user = try r.string()
            let session = try r.nonNullString("session id")
            let table = try ARITableInfo.read(from: &r, dialect: dialect, context: .mpnActivation)
            let device = try ARIMPNDevice.read(from: &r)
            return .mpnSubscriptionActivation(
                user: user, sessionId: session, table: table, device: device,
                trigger: try r.string(), notificationFormat: try r.string())
        case .mpnDeviceTokenChange:
            return .mpnDeviceTokenChange(
                user: try r.string(), sessionId: try r.nonNullString("session id"),
                device: try ARIMPNDevice.read(from: &r), newDeviceToken: try r.string())
        default:
            throw .unexpectedMethod(method.rawValue)
        }
    }

    private static func names(_ r: inout ARIArgumentReader) throws(ARIProtocolError) -> [String] {
        var names: [String] = []
        while !r.isAtEnd { names.append(try r.nonNullString("item")) }
        return names
    }

    private static func tables(
        _ r: inout ARIArgumentReader, _ dialect: ARIDialect,
        _ context: ARITableInfo.Context
    ) throws(ARIProtocolError) -> [ARITableInfo] {
        var tables: [ARITableInfo] = []
        repeat {
            tables.append(try ARITableInfo.read(from: &r, dialect: dialect, context: context))
        } while !r.isAtEnd
        return tables
    }
}
