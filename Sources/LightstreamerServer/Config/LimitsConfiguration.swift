/// The `limits` section of the configuration file: what one client, or all of them, may make
/// a session hold. Every key is optional; a missing key keeps the default of
/// `SessionSettings` (docs/CONFIG.md, "Limits"). Numbers must be greater than 0, except where
/// 0 is said to mean "no limit".
public struct LimitsConfiguration: Sendable, Hashable, Decodable {
    /// Live sessions in all (CONERR 8 beyond); 0: no limit.
    public var maxSessions: Int?
    /// Live sessions created from one client address (CONERR 8 beyond); 0: no limit.
    public var maxSessionsPerAddress: Int?
    /// Subscriptions one session may hold (REQERR 30 beyond).
    public var maxSubscriptionsPerSession: Int?
    /// Items one subscription may name once its group is expanded (REQERR 21 beyond).
    public var maxItemsPerSubscription: Int?
    /// Messages of one session waiting for a missing progressive, all sequences together
    /// (REQERR 65 beyond).
    public var maxQueuedMessages: Int?
    /// Message sequences one session may use (REQERR 65 for one more).
    public var maxMessageSequences: Int?
    /// MPN requests of one session waiting for the MPN Module (REQERR 41 beyond).
    public var maxQueuedMPNOperations: Int?
    /// Unsent bytes a session may hold for a client that does not read.
    public var maxBacklogBytes: Int?
    /// Unsent bytes all slow clients together may make the server hold.
    public var maxTotalBacklogBytes: Int?
    /// How long a connection whose client does not read may stay full before it is closed;
    /// 0: never.
    public var maxUndrainedMillis: Int?
    /// The largest request accepted (bytes), advertised in CONOK as the request limit.
    public var requestLimitBytes: Int?
    /// The longest `LS_inactivity_millis` honoured; a larger one counts as this.
    public var maxInactivityMillis: Int?
    /// The longest `LS_max_wait` honoured; a larger one counts as this.
    public var maxMessageWaitMillis: Int?

    static let zeroMeansUnlimited: Set<String> = ["maxSessions", "maxSessionsPerAddress", "maxUndrainedMillis"]
    static let keys = [
        "maxSessions", "maxSessionsPerAddress", "maxSubscriptionsPerSession", "maxItemsPerSubscription",
        "maxQueuedMessages", "maxMessageSequences", "maxQueuedMPNOperations", "maxBacklogBytes",
        "maxTotalBacklogBytes", "maxUndrainedMillis",
        "requestLimitBytes", "maxInactivityMillis", "maxMessageWaitMillis",
    ]

    /// No key set: every limit keeps the default of `SessionSettings`.
    public init() {}

    /// Decodes the `limits` object; unknown keys and out-of-range numbers are errors.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Self.keys)
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        func read(_ name: String) throws -> Int? {
            Self.zeroMeansUnlimited.contains(name) ? try c.nonNegative(name, decoder) : try c.positive(name, decoder)
        }
        maxSessions = try read("maxSessions")
        maxSessionsPerAddress = try read("maxSessionsPerAddress")
        maxSubscriptionsPerSession = try read("maxSubscriptionsPerSession")
        maxItemsPerSubscription = try read("maxItemsPerSubscription")
        maxQueuedMessages = try read("maxQueuedMessages")
        maxMessageSequences = try read("maxMessageSequences")
        maxQueuedMPNOperations = try read("maxQueuedMPNOperations")
        maxBacklogBytes = try read("maxBacklogBytes")
        maxTotalBacklogBytes = try read("maxTotalBacklogBytes")
        maxUndrainedMillis = try read("maxUndrainedMillis")
        requestLimitBytes = try read("requestLimitBytes")
        if let r = requestLimitBytes, r < 1_000 {
            throw decoder.invalid(
                "expected a request limit of at least 1000 bytes, got \(r)",
                at: AnyCodingKey(stringValue: "requestLimitBytes"))
        }
        maxInactivityMillis = try read("maxInactivityMillis")
        maxMessageWaitMillis = try read("maxMessageWaitMillis")
    }

    /// `settings` with the limits this section sets.
    public func apply(to settings: inout SessionSettings) {
        if let v = maxSessions { settings.maxSessions = v == 0 ? nil : v }
        if let v = maxSessionsPerAddress { settings.maxSessionsPerAddress = v == 0 ? nil : v }
        if let v = maxSubscriptionsPerSession { settings.maxSubscriptionsPerSession = v }
        if let v = maxItemsPerSubscription { settings.maxItemsPerSubscription = v }
        if let v = maxQueuedMessages { settings.maxQueuedMessages = v }
        if let v = maxMessageSequences { settings.maxMessageSequences = v }
        if let v = maxQueuedMPNOperations { settings.maxQueuedMPNOperations = v }
        if let v = maxBacklogBytes { settings.maxBacklogBytes = v }
        if let v = maxTotalBacklogBytes { settings.maxTotalBacklogBytes = v }
        if let v = maxUndrainedMillis { settings.maxUndrainedMillis = v }
        if let v = requestLimitBytes { settings.requestLimit = v }
        if let v = maxInactivityMillis { settings.maxInactivityMillis = v }
        if let v = maxMessageWaitMillis { settings.maxMessageWaitMillis = v }
    }
}
