import ARI
import Logging

/// `remote` in an adapter set's `metadata` or in one of its `dataAdapters`: the adapter is a
/// separate process that connects to `host:port` over ARI (docs/ARI.md, docs/CONFIG.md).
public struct RemoteAdapterConfiguration: Sendable, Decodable, Hashable {
    /// The address to listen on for the remote (default 127.0.0.1).
    public var host: String
    /// The port the remote connects to (0: any free port, for tests).
    public var port: Int
    /// The `RAC` user and password the remote must present; nil accepts any remote.
    public var credentials: RemoteCredentials?
    /// How long a request to the remote waits for its reply (default 10,000 ms).
    public var requestTimeoutMillis: Int64
    /// How long the remote may take to present its credentials and answer the init (default 10,000 ms).
    public var handshakeTimeoutMillis: Int64
    /// `keepalive_hint.millis` sent in the init; nil sends none.
    public var keepaliveHintMillis: Int?
    /// Silence after which the connection is closed; nil never.
    public var inactivityTimeoutMillis: Int64?
    /// Passed to the remote adapter's `initialize` with the init request.
    public var parameters: [String: String]
    /// Certificate chain and private key (PEM) when the remote must connect with TLS; nil
    /// listens for plain TCP. The same object as the client port's `tls` (docs/CONFIG.md).
    public var tls: ServerConfiguration.TLS?

    /// A remote endpoint; the defaults are those of the configuration file.
    public init(
        host: String = "127.0.0.1", port: Int, credentials: RemoteCredentials? = nil, requestTimeoutMillis: Int64 = 10_000,
        handshakeTimeoutMillis: Int64 = 10_000, keepaliveHintMillis: Int? = nil, inactivityTimeoutMillis: Int64? = nil,
        parameters: [String: String] = [:], tls: ServerConfiguration.TLS? = nil
    ) {
        self.host = host
        self.port = port
        self.credentials = credentials
        self.requestTimeoutMillis = requestTimeoutMillis
        self.handshakeTimeoutMillis = handshakeTimeoutMillis
        self.keepaliveHintMillis = keepaliveHintMillis
        self.inactivityTimeoutMillis = inactivityTimeoutMillis
        self.parameters = parameters
        self.tls = tls
    }

    static let keys = [
        "host", "port", "user", "password", "requestTimeoutMillis", "handshakeTimeoutMillis",
        "keepaliveHintMillis", "inactivityTimeoutMillis", "parameters", "tls",
    ]

    /// Reads the `remote` object of the configuration file; unknown keys and out-of-range values are errors.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Self.keys)
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        func key(_ s: String) -> AnyCodingKey { AnyCodingKey(stringValue: s) }
        host = try c.decodeIfPresent(String.self, forKey: key("host")) ?? "127.0.0.1"
        guard !host.isEmpty else { throw decoder.invalid("expected a host name or address", at: key("host")) }
        port = try c.decode(Int.self, forKey: key("port"))
        guard (0...65535).contains(port) else { throw decoder.invalid("expected a port from 0 to 65535, got \(port)", at: key("port")) }
        let user = try c.decodeIfPresent(String.self, forKey: key("user"))
        let password = try c.decodeIfPresent(String.self, forKey: key("password"))
        switch (user, password) {
        case (let u?, let p?): credentials = RemoteCredentials(user: u, password: p)
        case (nil, nil): credentials = nil
        default: throw decoder.invalid("expected both user and password, or neither", at: key(user == nil ? "user" : "password"))
        }
        requestTimeoutMillis = Int64(try c.positive("requestTimeoutMillis", decoder) ?? 10_000)
        handshakeTimeoutMillis = Int64(try c.positive("handshakeTimeoutMillis", decoder) ?? 10_000)
        keepaliveHintMillis = try c.positive("keepaliveHintMillis", decoder)
        inactivityTimeoutMillis = try c.positive("inactivityTimeoutMillis", decoder).map(Int64.init)
        parameters = try c.decodeIfPresent([String: String].self, forKey: key("parameters")) ?? [:]
        tls = try c.decodeIfPresent(ServerConfiguration.TLS.self, forKey: key("tls"))
    }

    func connectionConfiguration(role: RemoteConnectionConfiguration.Role, adapterSet: String) -> RemoteConnectionConfiguration {
        RemoteConnectionConfiguration(
            role: role, adapterSet: adapterSet, credentials: credentials,
            keepaliveHintMillis: keepaliveHintMillis,
            parameters: parameters.keys.sorted().map { ARIPair($0, parameters[$0]) },
            requestTimeoutMillis: requestTimeoutMillis, handshakeTimeoutMillis: handshakeTimeoutMillis,
            inactivityTimeoutMillis: inactivityTimeoutMillis)
    }

    /// The connection and endpoint for one remote adapter of `adapterSet`.
    func makeEndpoint(adapterSet: String, dataAdapter: String?, logger: Logger) -> RemoteAdapterEndpoint {
        let role: RemoteConnectionConfiguration.Role = dataAdapter.map { .data(name: $0) } ?? .metadata
        var log = logger
        log[metadataKey: "adapterSet"] = "\(adapterSet)"
        log[metadataKey: "remote"] = "\(dataAdapter.map { "data:\($0)" } ?? "metadata")"
        let connection = RemoteAdapterConnection(
            configuration: connectionConfiguration(role: role, adapterSet: adapterSet),
            logger: log)
        return RemoteAdapterEndpoint(
            adapterSet: adapterSet, dataAdapter: dataAdapter, host: host, port: port, tls: tls,
            connection: connection, logger: log)
    }
}
