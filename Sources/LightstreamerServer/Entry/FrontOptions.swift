import NIOSSL

/// Limits and timeouts of the connection layer (docs/CONFIG.md, "Limits and timeouts").
/// Times in milliseconds, sizes in bytes.
public struct FrontOptions: Sendable {
    /// From accept to the end of the TLS handshake.
    public var tlsHandshakeTimeoutMillis = 10_000
    /// From the first byte of a request to the end of its head (request line and headers); for
    /// a connection's first request, from the connection's start (or the TLS handshake's end).
    public var requestHeadTimeoutMillis = 10_000
    /// From the end of a request's head to the end of its body.
    public var requestBodyTimeoutMillis = 30_000
    /// A keep-alive HTTP connection between a response's end and the next request's first byte.
    public var idleConnectionTimeoutMillis = 60_000
    /// From a WebSocket upgrade until a session is created or bound on it.
    public var webSocketSessionTimeoutMillis = 15_000
    /// Open connections on a listener; more are closed at accept.
    public var maxConnections = 16_000
    /// Open connections from one client address; more are closed at accept.
    public var maxConnectionsPerAddress = 1_000
    /// A request's head (request line and headers).
    public var maxRequestHeadBytes = 64 * 1024
    /// Bytes of a client connection's output the kernel may keep unsent (`TCP_NOTSENT_LOWAT`);
    /// past them a write waits in the server, where the session folds its MERGE updates. 0: the
    /// kernel's own limit, its send buffer (megabytes on a fast link). At most 64 MiB.
    public var maxSocketUnsentBytes = 16 * 1024
    /// `Origin` values accepted on the WebSocket upgrade and on HTTP requests; nil: all.
    public var allowedOrigins: [String]?
    /// Where to serve `/metrics` instead of on the main listener; nil: on the main listener.
    public var adminListener: (host: String, port: Int)?
    /// The oldest TLS version accepted.
    public var tlsMinimumVersion: TLSVersion = .tlsv12

    /// The defaults, which suit a public server.
    public init() {}

    var phaseLimits: ConnectionPhases.Limits {
        ConnectionPhases.Limits(
            tlsHandshakeMillis: tlsHandshakeTimeoutMillis, requestHeadMillis: requestHeadTimeoutMillis,
            requestBodyMillis: requestBodyTimeoutMillis, idleMillis: idleConnectionTimeoutMillis,
            webSocketSessionMillis: webSocketSessionTimeoutMillis, maxRequestHeadBytes: maxRequestHeadBytes)
    }
}
