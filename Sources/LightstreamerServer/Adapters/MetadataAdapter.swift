/// The Metadata Adapter API: authentication, item and field naming, authorization and
/// limits, and client messages. Every method has a permissive default in the extension below,
/// so an adapter implements only what it needs. Throwing `MetadataError` refuses a request
/// with the protocol's code (≤0 codes are the adapter's own and reach the client unchanged).
///
/// The questions the server asks before it serves a session, a subscription or a message are
/// `async`: a remote adapter answers them over the network (docs/ARI.md). An in-process adapter
/// implements them as plain synchronous methods, which satisfy the requirements as they are.
/// The two close notifications stay synchronous: the server does not wait for them.
public protocol MetadataAdapter: AnyObject, Sendable {
    /// Authenticates a new session. `headers` are the HTTP (or WS upgrade) headers, lower-case
    /// names. Throw `.access(code:message:)` (CONERR 1, or a code ≤0) to refuse.
    func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws
    /// Whether `notifyUser` looks at `headers`. When no adapter set's Metadata Adapter does, a
    /// WebSocket does not keep its upgrade headers for the sessions created on it (some 200
    /// bytes per WebSocket) and `notifyUser` gets none. The default, `true`, keeps them; an
    /// adapter that never reads them may say `false`.
    var readsHTTPHeaders: Bool { get }
    /// Resolves an item group (the `LS_group` text) into item names.
    func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String]
    /// Resolves a field schema (the `LS_schema` text) into field names.
    func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String]
    /// Called once per subscription with its resolved items, before the per-item questions
    /// below (`isModeAllowed`, `allowedMaxFrequency`, …) are asked about them. An adapter that
    /// gets those answers from elsewhere fetches them here in one go; throwing refuses the
    /// subscription (as `notifyNewTable` does).
    func prepareItemChecks(user: String?, sessionId: String, items: [String]) async throws
    /// Whether `user` may subscribe `item` in `mode`.
    func isModeAllowed(user: String?, item: String, mode: SubscriptionMode) async -> Bool
    /// Whether `mode` is ever allowed for `item` (a static property of the item).
    func modeMayBeAllowed(item: String, mode: SubscriptionMode) async -> Bool
    /// The most updates per second `user` may receive for `item`; nil is unlimited.
    func allowedMaxFrequency(user: String?, item: String) async -> Double?
    /// The largest buffer `user` may use for `item`; nil is unlimited.
    func allowedBufferSize(user: String?, item: String) async -> Int?
    /// The most bandwidth (kbps) `user`'s session may use; nil is unlimited.
    func allowedMaxBandwidth(user: String?) async -> Double?
    /// Snapshot length kept for a DISTINCT item.
    func distinctSnapshotLength(item: String) async -> Int
    /// Called when a subscription is about to start; throw to refuse it.
    func notifyNewTable(user: String?, sessionId: String, table: TableInfo) async throws
    /// Called when a subscription ended.
    func notifyTableClosed(sessionId: String, table: TableInfo)
    /// Called for a session that was created (after `notifyUser` accepted it).
    func notifyNewSession(user: String?, sessionId: String, clientContext: [String: String]) async throws
    /// Called when a session ended.
    func notifySessionClose(sessionId: String)
    /// Handles a client message (`sendMessage`). The returned text, if any, goes back to the
    /// client in MSGDONE (2.5 clients). Throw `.message(code:message:)` (≤0) or
    /// `.notification(message:)` (code 34) to refuse.
    func notifyUserMessage(user: String?, sessionId: String, message: String) async throws -> String?
}

/// One subscription ("table") as the Metadata Adapter sees it.
public struct TableInfo: Sendable, Hashable {
    /// The subscription mode.
    public var mode: SubscriptionMode
    /// The item group as the client sent it (`LS_group`).
    public var group: String
    /// The field schema as the client sent it (`LS_schema`).
    public var schema: String
    /// The name of the Data Adapter the items come from.
    public var dataAdapter: String
    /// The item names the group resolved to.
    public var items: [String]
    /// The field names the schema resolved to.
    public var fields: [String]
    /// The selector the client asked for, if any.
    public var selector: String?
    /// The client's id for the subscription (`LS_subId`) within its session; nil when the
    /// table is not a session's.
    public var subscriptionId: Int?

    /// A table with all its properties.
    public init(
        mode: SubscriptionMode, group: String, schema: String, dataAdapter: String, items: [String],
        fields: [String], selector: String?, subscriptionId: Int? = nil
    ) {
        self.subscriptionId = subscriptionId
        self.mode = mode
        self.group = group
        self.schema = schema
        self.dataAdapter = dataAdapter
        self.items = items
        self.fields = fields
        self.selector = selector
    }
}

/// A refusal from the Metadata Adapter, with the code the client sees.
public enum MetadataError: Error, Sendable, Equatable {
    /// Authentication refused: CONERR 1, or the adapter's own code (≤0).
    case access(code: Int = 1, message: String)
    /// Temporarily unable to check credentials (CONERR 6, 2.2+).
    case retryLater(message: String)
    /// Bad item group (REQERR 21).
    case itemsNotFound(message: String)
    /// Bad field schema (REQERR 23).
    case schemaNotFound(message: String)
    /// A subscription refused by the adapter (code ≤0).
    case subscription(code: Int, message: String)
    /// A message refused by the adapter (code ≤0).
    case message(code: Int, message: String)
    /// A message the adapter could not handle (MSGFAIL 34).
    case notification(message: String)
}

extension MetadataAdapter {
    /// Default: every user is accepted.
    public func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws {}
    /// Default: the headers are kept and handed over.
    public var readsHTTPHeaders: Bool { true }
    /// Default: nothing to prepare.
    public func prepareItemChecks(user: String?, sessionId: String, items: [String]) async throws {}
    /// Default: every mode is allowed.
    public func isModeAllowed(user: String?, item: String, mode: SubscriptionMode) async -> Bool { true }
    /// Default: every mode may be allowed.
    public func modeMayBeAllowed(item: String, mode: SubscriptionMode) async -> Bool { true }
    /// Default: unlimited (nil).
    public func allowedMaxFrequency(user: String?, item: String) async -> Double? { nil }
    /// Default: unlimited (nil).
    public func allowedBufferSize(user: String?, item: String) async -> Int? { nil }
    /// Default: unlimited (nil).
    public func allowedMaxBandwidth(user: String?) async -> Double? { nil }
    /// Default: 100 events.
    public func distinctSnapshotLength(item: String) async -> Int { 100 }
    /// Default: every subscription is accepted.
    public func notifyNewTable(user: String?, sessionId: String, table: TableInfo) async throws {}
    /// Default: does nothing.
    public func notifyTableClosed(sessionId: String, table: TableInfo) {}
    /// Default: every session is accepted.
    public func notifyNewSession(user: String?, sessionId: String, clientContext: [String: String]) async throws {}
    /// Default: does nothing.
    public func notifySessionClose(sessionId: String) {}
    /// Default: every message is accepted, with no response text.
    public func notifyUserMessage(user: String?, sessionId: String, message: String) async throws -> String? { nil }
}

/// The default Metadata Adapter: an item group is a space-separated list of item names and a
/// field schema a space-separated list of field names; everything is allowed.
public final class LiteralBasedMetadataAdapter: MetadataAdapter {
    /// The literal adapter; it keeps no state.
    public init() {}

    /// It accepts every user without looking at the headers.
    public var readsHTTPHeaders: Bool { false }

    /// The group split at spaces; an empty group is refused (`MetadataError.itemsNotFound`).
    public func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
        let names = group.split(separator: " ").map(String.init)
        guard !names.isEmpty else { throw MetadataError.itemsNotFound(message: "Empty item group") }
        return names
    }

    /// The schema split at spaces; an empty schema is refused (`MetadataError.schemaNotFound`).
    public func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
        let names = schema.split(separator: " ").map(String.init)
        guard !names.isEmpty else { throw MetadataError.schemaNotFound(message: "Empty field schema") }
        return names
    }
}
