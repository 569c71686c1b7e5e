import NIOConcurrencyHelpers

/// The DEMO metadata adapter: literal item groups and schemas; `portfolio1` only in COMMAND
/// mode and the other items in any mode but COMMAND; `CHAT|<text>` messages go to
/// `chat_room` (other messages are accepted and ignored); user `refused` cannot log in.
public final class DemoMetadataAdapter: MetadataAdapter {
    public static let chatPrefix = "CHAT|"

    private let data: DemoDataAdapter
    private let options: DemoAdapters.Options
    private let literal = LiteralBasedMetadataAdapter()
    /// Session id → client IP, for the chat's `IP` field.
    private let sessionIPs = NIOLockedValueBox<[String: String]>([:])

    init(data: DemoDataAdapter, options: DemoAdapters.Options) {
        self.data = data
        self.options = options
    }

    public func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws {
        if let refused = options.refusedUser, user == refused {
            throw MetadataError.access(code: DemoAdapters.refusedLoginCode, message: "User \(refused) is not allowed")
        }
    }

    public func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
        try await literal.items(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter)
    }

    public func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
        try await literal.fields(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter, schema: schema)
    }

    public func modeMayBeAllowed(item: String, mode: SubscriptionMode) async -> Bool {
        (item == DemoDataAdapter.portfolioItem) == (mode == .command)
    }

    public func isModeAllowed(user: String?, item: String, mode: SubscriptionMode) async -> Bool {
        await modeMayBeAllowed(item: item, mode: mode)
    }

    public func distinctSnapshotLength(item: String) async -> Int {
        item == DemoDataAdapter.chatItem ? max(0, options.chatHistoryLength) : 10
    }

    public func notifyNewSession(user: String?, sessionId: String, clientContext: [String: String]) async throws {
        let ip = clientContext["clientIP"] ?? clientContext["REMOTE_IP"] ?? clientContext["ip"]
        if let ip { sessionIPs.withLockedValue { $0[sessionId] = ip } }
    }

    public func notifySessionClose(sessionId: String) {
        _ = sessionIPs.withLockedValue { $0.removeValue(forKey: sessionId) }
    }

    public func notifyUserMessage(user: String?, sessionId: String, message: String) async throws -> String? {
        guard message.hasPrefix(Self.chatPrefix) else { return nil }
        let text = String(message.dropFirst(Self.chatPrefix.count))
        let ip = sessionIPs.withLockedValue { $0[sessionId] }
        data.postChat(text, nick: user ?? "guest", ip: ip)
        return nil
    }
}
