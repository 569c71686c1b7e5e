/// A Metadata Adapter driven by rules (usually from the configuration file): literal item
/// groups and field schemas (space-separated names, as `LiteralBasedMetadataAdapter`), an
/// optional user/password table, allowed modes and limits per item pattern, and a policy or
/// a hook for client messages.
public final class ConfiguredMetadataAdapter: MetadataAdapter {
    /// Limits for the items whose names match `pattern` (the first matching rule wins; a
    /// property left nil falls back to the adapter-wide value).
    public struct ItemRule: Sendable, Hashable {
        /// The item names the rule applies to.
        public var pattern: ItemPattern
        /// The modes allowed for these items; nil: the adapter-wide ones.
        public var allowedModes: Set<SubscriptionMode>?
        /// The most updates per second per item; nil: the adapter-wide limit.
        public var maxFrequency: Double?
        /// The largest buffer per item; nil: the adapter-wide limit.
        public var bufferSize: Int?
        /// Events kept for a DISTINCT snapshot; nil: the adapter-wide length.
        public var distinctSnapshotLength: Int?

        /// A rule for the items matching `pattern`.
        public init(
            pattern: ItemPattern, allowedModes: Set<SubscriptionMode>? = nil, maxFrequency: Double? = nil,
            bufferSize: Int? = nil, distinctSnapshotLength: Int? = nil
        ) {
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

    /// The adapter's rules: who may log in, what may be subscribed, limits, messages.
    public struct Rules: Sendable, Hashable {
        /// user → password. nil: anyone may log in (with any password).
        public var users: [String: String]?
        /// Code of a refused login: 1 (the protocol's) or an adapter code ≤ 0.
        public var refusalCode: Int
        /// The modes allowed for items no item rule matches.
        public var allowedModes: Set<SubscriptionMode>
        /// The most updates per second per item for every subscription; nil: unlimited.
        public var maxFrequency: Double?
        /// The largest buffer a subscription may use per item; nil: unlimited.
        public var bufferSize: Int?
        /// The most bandwidth of a session, in kbit/s; nil: unlimited.
        public var maxBandwidth: Double?
        /// Events kept per item for DISTINCT snapshots.
        public var distinctSnapshotLength: Int
        /// Rules per item-name pattern; the first that matches wins.
        public var items: [ItemRule]
        /// What happens to client messages.
        public var messages: MessagePolicy

        /// Rules given in code; the defaults let anyone in and limit nothing.
        public init(
            users: [String: String]? = nil, refusalCode: Int = 1,
            allowedModes: Set<SubscriptionMode> = Set(SubscriptionMode.allCases), maxFrequency: Double? = nil,
            bufferSize: Int? = nil, maxBandwidth: Double? = nil, distinctSnapshotLength: Int = 100,
            items: [ItemRule] = [], messages: MessagePolicy = .accept
        ) {
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

    /// The adapter's rules.
    public let rules: Rules
    private let messageHandler: MessageHandler?
    private let literal = LiteralBasedMetadataAdapter()

    /// An adapter applying `rules`; `messageHandler`, when given, handles client messages
    /// instead of `Rules.messages`.
    public init(rules: Rules = Rules(), messageHandler: MessageHandler? = nil) {
        self.rules = rules
        self.messageHandler = messageHandler
    }

    private func rule(for item: String) -> ItemRule? {
        rules.items.first { $0.pattern.matches(item) }
    }

    /// Its user table checks names and passwords only.
    public var readsHTTPHeaders: Bool { false }

    /// With a user table, accepts only a listed user with its password (a missing password counts
    /// as empty); refuses with `Rules.refusalCode`.
    public func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws {
        guard let users = rules.users else { return }
        guard let user, let expected = users[user], expected == (password ?? "") else {
            throw MetadataError.access(code: rules.refusalCode, message: "Invalid user or password")
        }
    }

    /// The group split at spaces (as `LiteralBasedMetadataAdapter`).
    public func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
        try await literal.items(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter)
    }

    /// The schema split at spaces (as `LiteralBasedMetadataAdapter`).
    public func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
        try await literal.fields(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter, schema: schema)
    }

    /// The same answer for every user: `modeMayBeAllowed(item:mode:)`.
    public func isModeAllowed(user: String?, item: String, mode: SubscriptionMode) async -> Bool {
        await modeMayBeAllowed(item: item, mode: mode)
    }

    /// Whether `mode` is among the item rule's modes, or else the adapter-wide ones.
    public func modeMayBeAllowed(item: String, mode: SubscriptionMode) async -> Bool {
        (rule(for: item)?.allowedModes ?? rules.allowedModes).contains(mode)
    }

    /// The item rule's frequency limit, or else the adapter-wide one.
    public func allowedMaxFrequency(user: String?, item: String) async -> Double? {
        rule(for: item)?.maxFrequency ?? rules.maxFrequency
    }

    /// The item rule's buffer size, or else the adapter-wide one.
    public func allowedBufferSize(user: String?, item: String) async -> Int? {
        rule(for: item)?.bufferSize ?? rules.bufferSize
    }

    /// `Rules.maxBandwidth`, for every user.
    public func allowedMaxBandwidth(user: String?) async -> Double? {
        rules.maxBandwidth
    }

    /// The item rule's length, or else the adapter-wide one.
    public func distinctSnapshotLength(item: String) async -> Int {
        rule(for: item)?.distinctSnapshotLength ?? rules.distinctSnapshotLength
    }

    /// The message handler's answer when there is one; else `Rules.messages` decides.
    public func notifyUserMessage(user: String?, sessionId: String, message: String) async throws -> String? {
        if let messageHandler { return try await messageHandler(user, sessionId, message) }
        switch rules.messages {
        case .accept: return nil
        case .echo: return message
        case .refuse: throw MetadataError.notification(message: "Messages are not accepted")
        }
    }
}
