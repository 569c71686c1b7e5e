/// A Metadata Adapter driven by rules (usually from the configuration file): literal item
/// groups and field schemas (space-separated names, as `LiteralBasedMetadataAdapter`), an
/// optional user/password table, allowed modes and limits per item pattern, and a policy or
/// a hook for client messages.
public final class ConfiguredMetadataAdapter: MetadataAdapter {
    /// Limits for the items whose names match `pattern` (the first matching rule wins; a
    /// property left nil falls back to the adapter-wide value).
    public struct ItemRule: Sendable, Hashable {
        public var pattern: ItemPattern
        public var allowedModes: Set<SubscriptionMode>?
        public var maxFrequency: Double?
        public var bufferSize: Int?
        public var distinctSnapshotLength: Int?

        public init(pattern: ItemPattern, allowedModes: Set<SubscriptionMode>? = nil, maxFrequency: Double? = nil,
                    bufferSize: Int? = nil, distinctSnapshotLength: Int? = nil) {
            self.pattern = pattern
            self.allowedModes = allowedModes
            self.maxFrequency = maxFrequency
            self.bufferSize = bufferSize
            self.distinctSnapshotLength = distinctSnapshotLength
        }
    }

    /// What happens to a client message when no `MessageHandler` is given.
    public enum MessagePolicy: String, Sendable, Hashable, CaseIterable {
        /// Accepted, MSGDONE with an empty response.
        case accept
        /// Accepted, MSGDONE with the message text as the response.
        case echo
        /// Refused, MSGFAIL 34.
        case refuse
    }

    public struct Rules: Sendable, Hashable {
        /// user → password. nil: anyone may log in (with any password).
        public var users: [String: String]?
        /// Code of a refused login: 1 (the protocol's) or an adapter code ≤ 0.
        public var refusalCode: Int
        public var allowedModes: Set<SubscriptionMode>
        public var maxFrequency: Double?
        public var bufferSize: Int?
        public var maxBandwidth: Double?
        public var distinctSnapshotLength: Int
        public var items: [ItemRule]
        public var messages: MessagePolicy

        public init(users: [String: String]? = nil, refusalCode: Int = 1,
                    allowedModes: Set<SubscriptionMode> = Set(SubscriptionMode.allCases), maxFrequency: Double? = nil,
                    bufferSize: Int? = nil, maxBandwidth: Double? = nil, distinctSnapshotLength: Int = 100,
                    items: [ItemRule] = [], messages: MessagePolicy = .accept) {
            self.users = users
            self.refusalCode = refusalCode
            self.allowedModes = allowedModes
            self.maxFrequency = maxFrequency
            self.bufferSize = bufferSize
            self.maxBandwidth = maxBandwidth
            self.distinctSnapshotLength = distinctSnapshotLength
            self.items = items
            self.messages = messages
        }
    }

    /// Handles client messages instead of the policy. The returned text goes back in MSGDONE.
    public typealias MessageHandler = @Sendable (_ user: String?, _ sessionId: String, _ message: String) async throws -> String?

    public let rules: Rules
    private let messageHandler: MessageHandler?
    private let literal = LiteralBasedMetadataAdapter()

    public init(rules: Rules = Rules(), messageHandler: MessageHandler? = nil) {
        self.rules = rules
        self.messageHandler = messageHandler
    }

    private func rule(for item: String) -> ItemRule? {
        rules.items.first { $0.pattern.matches(item) }
    }

    public func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws {
        guard let users = rules.users else { return }
        guard let user, let expected = users[user], expected == (password ?? "") else {
            throw MetadataError.access(code: rules.refusalCode, message: "Invalid user or password")
        }
    }

    public func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
        try await literal.items(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter)
    }

    public func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
        try await literal.fields(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter, schema: schema)
    }

    public func isModeAllowed(user: String?, item: String, mode: SubscriptionMode) async -> Bool {
        await modeMayBeAllowed(item: item, mode: mode)
    }

    public func modeMayBeAllowed(item: String, mode: SubscriptionMode) async -> Bool {
        (rule(for: item)?.allowedModes ?? rules.allowedModes).contains(mode)
    }

    public func allowedMaxFrequency(user: String?, item: String) async -> Double? {
        rule(for: item)?.maxFrequency ?? rules.maxFrequency
    }

    public func allowedBufferSize(user: String?, item: String) async -> Int? {
        rule(for: item)?.bufferSize ?? rules.bufferSize
    }

    public func allowedMaxBandwidth(user: String?) async -> Double? {
        rules.maxBandwidth
    }

    public func distinctSnapshotLength(item: String) async -> Int {
        rule(for: item)?.distinctSnapshotLength ?? rules.distinctSnapshotLength
    }

    public func notifyUserMessage(user: String?, sessionId: String, message: String) async throws -> String? {
        if let messageHandler { return try await messageHandler(user, sessionId, message) }
        switch rules.messages {
        case .accept: return nil
        case .echo: return message
        case .refuse: throw MetadataError.notification(message: "Messages are not accepted")
        }
    }
}
