/// The parameters of a `DPI`/`MPI` init request (docs/ARI.md, "Methods": `DPI` / `MPI`).
public struct ARIInitParameters: Sendable, Hashable {
    public static let versionKey = "ARI.version"
    public static let keepaliveHintKey = "keepalive_hint.millis"
    public static let adapterSetKey = "adapters_conf.id"
    public static let dataAdapterKey = "data_provider.name"
    public static let serverInstanceKey = "server.instance_id"

    /// The pairs in the order they are sent.
    public var pairs: [ARIPair]

    public init(pairs: [ARIPair]) {
        self.pairs = pairs
    }

    /// The parameters this server sends: the version it announces, the keepalive hint, the
    /// adapter set and (data connections) the Data Adapter name, then the configured ones.
    public init(
        version: ARIVersion = .announced, keepaliveHintMillis: Int?, adapterSet: String, dataAdapter: String?,
        serverInstanceId: String?, custom: [ARIPair] = []
    ) {
        var pairs = [ARIPair(Self.versionKey, version.description)]
        if let keepaliveHintMillis { pairs.append(ARIPair(Self.keepaliveHintKey, String(keepaliveHintMillis))) }
        pairs.append(ARIPair(Self.adapterSetKey, adapterSet))
        if let dataAdapter { pairs.append(ARIPair(Self.dataAdapterKey, dataAdapter)) }
        if let serverInstanceId { pairs.append(ARIPair(Self.serverInstanceKey, serverInstanceId)) }
        self.pairs = pairs + custom
    }

    /// The value of the first pair named `name`.
    public subscript(name: String) -> String? {
        pairs.first(where: { $0.name == name })?.value ?? nil
    }
}

/// What `RAC` carries: the remote's credentials and what it can do (docs/ARI.md, "Methods": `RAC`).
public struct ARIRemoteCredentials: Sendable, Hashable {
    public var pairs: [ARIPair]

    public init(pairs: [ARIPair]) {
        self.pairs = pairs
    }

    public init(user: String?, password: String?, enableClosePacket: Bool = true, sdk: String?) {
        var pairs: [ARIPair] = []
        if let user { pairs.append(ARIPair("user", user)) }
        if let password { pairs.append(ARIPair("password", password)) }
        pairs.append(ARIPair("enableClosePacket", enableClosePacket ? "true" : "false"))
        if let sdk { pairs.append(ARIPair("SDK", sdk)) }
        self.pairs = pairs
    }

    private func value(_ name: String) -> String? { pairs.first(where: { $0.name == name })?.value ?? nil }

    public var user: String? { value("user") }
    public var password: String? { value("password") }
    public var sdk: String? { value("SDK") }
    /// Whether the proxy may send `CLOSE` at any time, before the init too.
    public var enableClosePacket: Bool { value("enableClosePacket") == "true" }
}
