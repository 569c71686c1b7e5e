/// A request from the proxy (this server) to a remote adapter, with its arguments in wire order
/// (docs/ARI.md, "Methods").
public enum ARIRequest: Sendable, Hashable {
    case dataInit(ARIInitParameters)
    case metadataInit(ARIInitParameters)
    case subscribe(item: String)
    case unsubscribe(item: String)
    /// `NUS`: headers are lower-case names.
    case notifyUser(user: String?, password: String?, headers: [ARIPair])
    /// `NUA`: as NUS, with the TLS client certificate's principal.
    case notifyUserAuth(user: String?, password: String?, clientPrincipal: String?, headers: [ARIPair])
    case notifyNewSession(user: String?, sessionId: String, context: [ARIPair])
    case notifySessionClose(sessionId: String)
    case getItems(user: String?, group: String, sessionId: String)
    case getSchema(user: String?, group: String, schema: String, sessionId: String)
    case getItemData(items: [String])
    case getUserItemData(user: String?, items: [String])
    case notifyUserMessage(user: String?, sessionId: String, message: String)
    case notifyNewTables(user: String?, sessionId: String, tables: [ARITableInfo])
    case notifyTablesClose(sessionId: String, tables: [ARITableInfo])
    case mpnDeviceAccess(user: String?, sessionId: String, device: ARIMPNDevice)
    case mpnSubscriptionActivation(
        user: String?, sessionId: String, table: ARITableInfo, device: ARIMPNDevice,
        trigger: String?, notificationFormat: String?)
    case mpnDeviceTokenChange(user: String?, sessionId: String, device: ARIMPNDevice, newDeviceToken: String?)

    public var method: ARIMethod {
        switch self {
        case .dataInit: return .dataInit
        case .metadataInit: return .metadataInit
        case .subscribe: return .subscribe
        case .unsubscribe: return .unsubscribe
        case .notifyUser: return .notifyUser
        case .notifyUserAuth: return .notifyUserAuth
        case .notifyNewSession: return .notifyNewSession
        case .notifySessionClose: return .notifySessionClose
        case .getItems: return .getItems
        case .getSchema: return .getSchema
        case .getItemData: return .getItemData
        case .getUserItemData: return .getUserItemData
        case .notifyUserMessage: return .notifyUserMessage
        case .notifyNewTables: return .notifyNewTables
        case .notifyTablesClose: return .notifyTablesClose
        case .mpnDeviceAccess: return .mpnDeviceAccess
        case .mpnSubscriptionActivation: return .mpnSubscriptionActivation
        case .mpnDeviceTokenChange: return .mpnDeviceTokenChange
        }
    }

    /// The line for this request with id `id` (a token without `|`; `0`, `1` and `2` are taken).
    public func encode(id: String, dialect: ARIDialect) -> String {
        var w = ARILineWriter(id: id, method: method.rawValue)
        switch self {
        case .dataInit(let p), .metadataInit(let p):
            w.pairs(p.pairs)
        case .subscribe(let item), .unsubscribe(let item):
            w.string(item)
        case .notifyUser(let user, let password, let headers):
            w.string(user)
            w.string(password)
            w.pairs(headers)
        case .notifyUserAuth(let user, let password, let principal, let headers):
            w.string(user)
            w.string(password)
            w.string(principal)
            w.pairs(headers)
        case .notifyNewSession(let user, let sessionId, let context):
            w.string(user)
            w.string(sessionId)
            w.pairs(context)
        case .notifySessionClose(let sessionId):
            w.string(sessionId)
        case .getItems(let user, let group, let sessionId):
            w.string(user)
            w.string(group)
            w.string(sessionId)
        case .getSchema(let user, let group, let schema, let sessionId):
            w.string(user)
            w.string(group)
            w.string(schema)
            w.string(sessionId)
        case .getItemData(let items):
            for item in items { w.string(item) }
        case .getUserItemData(let user, let items):
            w.string(user)
            for item in items { w.string(item) }
        case .notifyUserMessage(let user, let sessionId, let message):
            w.string(user)
            w.string(sessionId)
            w.string(message)
        case .notifyNewTables(let user, let sessionId, let tables):
            w.string(user)
            w.string(sessionId)
            for t in tables { t.write(to: &w, dialect: dialect, context: .newTable) }
        case .notifyTablesClose(let sessionId, let tables):
            w.string(sessionId)
            for t in tables { t.write(to: &w, dialect: dialect, context: .closedTable) }
        case .mpnDeviceAccess(let user, let sessionId, let device):
            w.string(user)
            w.string(sessionId)
            device.write(to: &w)
        case .mpnSubscriptionActivation(let user, let sessionId, let table, let device, let trigger, let format):
            w.string(user)
            w.string(sessionId)
            table.write(to: &w, dialect: dialect, context: .mpnActivation)
            device.write(to: &w)
            w.string(trigger)
            w.string(format)
        case .mpnDeviceTokenChange(let user, let sessionId, let device, let newToken):
            w.string(user)
            w.string(sessionId)
            device.write(to: &w)
            w.string(newToken)
        }
        return w.line
    }

    /// The `CLOSE` line (its id is always `0`; the reason is optional).
    public static func encodeClose(reason: String?) -> String {
        var w = ARILineWriter(id: "0", method: ARIMethod.close.rawValue)
        if let reason {
            w.string("reason")
            w.string(reason)
        }
        return w.line
    }
}
