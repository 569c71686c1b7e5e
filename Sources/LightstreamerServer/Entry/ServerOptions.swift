import Foundation
import NIOCore

/// How the server listens and behaves (the network part of the configuration file).
public struct ServerOptions: Sendable {
    /// The address to listen on.
    public var host: String = "127.0.0.1"
    /// 0 picks a free port (see `LightstreamerServer.port`).
    public var port: Int = 8080
    /// Path prefix in front of `/lightstreamer` (e.g. `/ls`), empty for none.
    public var urlPrefix: String = ""
    /// PEM files for TLS; nil serves plain HTTP/WS.
    public var tlsCertificateChainFile: String?
    /// The PEM file of the private key (with `tlsCertificateChainFile`).
    public var tlsPrivateKeyFile: String?
    /// Session timings and limits.
    public var sessions = SessionSettings()
    /// Other names under which an adapter set is served (`["DEFAULT": "DEMO"]`).
    public var adapterSetAliases: [String: String] = [:]
    /// Event loop threads of a group the server makes for itself (and shuts down when it
    /// stops); 0: no group of its own, the server uses `eventLoopGroup` or NIO's shared
    /// `MultiThreadedEventLoopGroup.singleton` (one thread per core). Ignored when
    /// `eventLoopGroup` is set.
    public var threads: Int = 0
    /// The event loops the server (and the MPN Module's PostgreSQL store) run on. The server
    /// never shuts down a group it is given. nil: a group of `threads` threads when `threads`
    /// is above 0, else `MultiThreadedEventLoopGroup.singleton`.
    public var eventLoopGroup: (any EventLoopGroup)?
    /// Limits and timeouts of the connection layer, origins, admin listener, TLS versions.
    public var front = FrontOptions()
    /// On graceful shutdown, how long existing sessions may stay while new ones are refused
    /// (`LightstreamerServer.drain`), in milliseconds.
    public var drainMillis = ServerOptions.defaultDrainMillis
    /// Where the server's metrics go and what `/metrics` exports: by default a Prometheus
    /// registry of this server's own (docs/METRICS.md). The server never bootstraps the global
    /// `MetricsSystem`.
    public var metrics: MetricsBackend = .prometheus()
    /// The administrator of the dashboard and the admin API (docs/ADMIN.md); nil: the
    /// dashboard is read-only for loopback clients and admin actions are refused.
    public var admin: AdminCredentials?
    /// The folder of the server's own pages (`/`, `/dashboard`); nil: the one built with the
    /// server (`StaticSite.defaultDirectory`).
    public var webRoot: String?

    /// Options listening on `host`:`port`, every other value at its default.
    public init(host: String = "127.0.0.1", port: Int = 8080) {
        self.host = host
        self.port = port
    }

    var normalizedPrefix: String {
        var p = urlPrefix
        while p.hasSuffix("/") { p.removeLast() }
        if !p.isEmpty, !p.hasPrefix("/") { p = "/" + p }
        return p
    }
}
