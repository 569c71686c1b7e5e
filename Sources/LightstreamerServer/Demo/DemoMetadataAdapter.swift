import NIOConcurrencyHelpers

/// The DEMO metadata adapter: literal item groups and schemas; `portfolio1` only in COMMAND
/// mode and the other items in any mode but COMMAND; `CHAT|<text>` messages go to
/// `chat_room` (other messages are accepted and ignored); user `refused` cannot log in.
public final class DemoMetadataAdapter: MetadataAdapter {
    /// Messages starting with this go to `chat_room`.
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

    /// It refuses by user name only.
    public var readsHTTPHeaders: Bool { false }

    /// Refuses the configured refused user (`DemoAdapters.refusedLoginCode`); accepts everyone else.
    public func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws {
        if let refused = options.refusedUser, user == refused {
            throw MetadataError.access(code: DemoAdapters.refusedLoginCode, message: "User \(refused) is not allowed")
        }
    }

    /// The group split at spaces.
    public func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
        try await literal.items(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter)
    }

    /// The schema split at spaces.
    public func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
        try await literal.fields(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter, schema: schema)
    }

    /// COMMAND for `portfolio1` only; any other mode for the other items.
    public func modeMayBeAllowed(item: String, mode: SubscriptionMode) async -> Bool {
        (item == DemoDataAdapter.portfolioItem) == (mode == .command)
    }

    /// The same answer for every user: `modeMayBeAllowed(item:mode:)`.
    public func isModeAllowed(user: String?, item: String, mode: SubscriptionMode) async -> Bool {
        await modeMayBeAllowed(item: item, mode: mode)
    }

    /// The chat history length for `chat_room`; 10 for other items.
    public func distinctSnapshotLength(item: String) async -> Int {
        item == DemoDataAdapter.chatItem ? max(0, options.chatHistoryLength) : 10
    }

    /// Remembers the session's client address, for the chat's `IP` field.
    public func notifyNewSession(user: String?, sessionId: String, clientContext: [String: String]) async throws {
        let ip = clientContext["clientIP"] ?? clientContext["REMOTE_IP"] ?? clientContext["ip"]
        if let ip { sessionIPs.withLockedValue { $0[sessionId] = ip } }
    }

    /// Forgets the session's client address.
    public func notifySessionClose(sessionId: String) {
        _ = sessionIPs.withLockedValue { $0.removeValue(forKey: sessionId) }
    }

    /// Posts `CHAT|<text>` messages to `chat_room` (nick: the user, or `guest`); accepts and
    /// ignores other messages.
    public func notifyUserMessage(user: String?, sessionId: String, message: String) async throws -> String? {
        guard message.hasPrefix(Self.chatPrefix) else { return nil }
        let text = String(message.dropFirst(Self.chatPrefix.count))
        let ip = sessionIPs.withLockedValue { $0[sessionId] }
        data.postChat(text, nick: user ?? "guest", ip: ip)
        return nil
    }
}
