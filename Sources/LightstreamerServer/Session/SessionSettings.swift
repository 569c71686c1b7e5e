import TLCP

/// Server-wide session parameters (the `ServerConfiguration` timeouts map onto these).
public struct SessionSettings: Sendable, Hashable {
    /// `SERVNAME` (followed by the node name, when there is one).
    public var serverName: String = "Lightstreamer Swift Server"
    /// This node's name in a cluster (`NodeName`); nil: none.
    public var nodeName: String? = nil
    /// CONOK request-limit: the largest request, in bytes, a client may send.
    public var requestLimit: Int = 50_000
    /// CONOK control-link (`*`: the address the stream was opened on): where this node's
    /// clients send binds and new connections, checked by `ControlLink.validated`.
    public var controlLink: String = "*"
    /// Keepalive granted when the client asks none, and its bounds.
    public var defaultKeepaliveMillis: Int = 5_000
    /// The shortest keepalive granted: a smaller `LS_keepalive_millis` is raised to it.
    public var minKeepaliveMillis: Int = 1_000
    /// The longest keepalive granted: a larger `LS_keepalive_millis` is lowered to it.
    public var maxKeepaliveMillis: Int = 30_000
    /// Longest `LS_idle_millis` a poll may wait.
    public var maxIdleMillis: Int = 30_000
    /// Longest `LS_polling_millis` honoured (the LOOP delay and the wait between polls).
    public var maxPollingMillis: Int = 15_000
    /// Byte budget of an HTTP stream when the client gives none (or a too low one).
    public var defaultContentLength: Int = 4_000_000
    /// The smallest `LS_content_length` honoured; a smaller one gets `defaultContentLength` instead.
    public var minContentLength: Int = 1_000
    /// How long a session stays alive unbound after a clean LOOP (plus the polling gap).
    public var sessionTimeoutMillis: Int = 10_000
    /// How long a session whose stream dropped without LOOP waits for a recovery bind.
    public var sessionRecoveryMillis: Int = 30_000
    /// How long sent data notifications stay available for `LS_recovery_from`, and how many at most.
    public var recoveryWindowMillis: Int = 30_000
    /// The most sent data notifications kept for `LS_recovery_from`, whatever their age.
    public var recoveryMaxNotifications: Int = 20_000
    /// Data notifications held undelivered before the session is closed (a client that never comes back).
    public var maxPendingNotifications: Int = 200_000
    /// Interval of SYNC notifications on streams that want them.
    public var syncIntervalMillis: Int = 30_000
    /// Delay before a waiting poll answers once data is ready (lets a burst travel together).
    public var pollCoalesceMillis: Int = 10
    /// How long a connection may stay unable to take more output (its client does not read)
    /// before it is closed; reading its requests pauses meanwhile (0: never close).
    public var maxUndrainedMillis: Int = 20_000
    /// Most live sessions; a create beyond it gets CONERR 8 (nil: no limit).
    public var maxSessions: Int? = nil
    /// Most live sessions created from one client address; a create beyond it gets CONERR 8
    /// (nil: no limit). Clients behind one NAT or proxy share an address: raise it there.
    public var maxSessionsPerAddress: Int? = 1_000
    /// Most subscriptions one session may hold; an `add` beyond it gets REQERR 30.
    public var maxSubscriptionsPerSession: Int = 2_000
    /// Most items one subscription may name (after the Metadata Adapter expands the group);
    /// beyond it the `add` gets REQERR 21.
    public var maxItemsPerSubscription: Int = 1_000
    /// Most messages of one session waiting for a missing `LS_msg_prog` (all sequences
    /// together); a `msg` beyond it gets REQERR 65 and is not queued.
    public var maxQueuedMessages: Int = 1_000
    /// Most message sequences one session may use; a `msg` opening one more gets REQERR 65.
    public var maxMessageSequences: Int = 1_000
    /// Unsent bytes one session may hold (data notifications not yet written plus what its
    /// connection has not sent): past it the session is closed with END 33... see `flushData`.
    public var maxBacklogBytes: Int = 2 << 20
    /// Bytes all connections together may hold for clients that do not read, beyond what
    /// each holds up to its write water mark (`BacklogBudget`): a write past it closes its
    /// connection as `maxBacklogBytes` would.
    public var maxTotalBacklogBytes: Int = 256 << 20
    /// Most MPN operations of one session waiting for the MPN Module; beyond it REQERR 41.
    public var maxQueuedMPNOperations: Int = 100
    /// Longest delay the server may add to data notifications to send more of them in one
    /// socket write (0: write as soon as the session's event loop gets to them). Updates of
    /// the same session that arrive within this window go out together. Taken within 0…1000
    /// (`ServerConfiguration.Timeouts.maxUpdateDelayLimit`); the configuration file's
    /// `timeouts.maxUpdateDelayMillis` (docs/CONFIG.md).
    public var maxUpdateDelayMillis: Int = 0
    /// How long a sequence waits for missing message progressives without `LS_max_wait`.
    public var defaultMessageMaxWaitMillis: Int = 10_000
    /// Longest reverse-heartbeat interval honoured: a larger `LS_inactivity_millis` counts as this.
    public var maxInactivityMillis: Int = 3_600_000
    /// Longest `LS_content_length` honoured: a larger one counts as this.
    public var maxContentLength: Int = 1 << 40
    /// Longest `LS_max_wait` honoured: a larger one counts as this.
    public var maxMessageWaitMillis: Int = 60_000

    /// Whether MPN operations are handed over (set when the server has an MPN Module); when
    /// false they are refused with 40.
    public var mpnEnabled: Bool = false

    /// The defaults, which suit a public server.
    public init() {}

    /// The `SERVNAME` argument: `serverName`, then the node name in parentheses.
    public var announcedServerName: String {
        nodeName.map { "\(serverName) (\($0))" } ?? serverName
    }
}

/// One `SessionSettings` value that many sessions point to (immutable).
final class SharedSessionSettings: Sendable {
    let value: SessionSettings
    init(_ value: SessionSettings) { self.value = value }
}
