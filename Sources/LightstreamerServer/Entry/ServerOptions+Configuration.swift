/// The server options a configuration file gives.
extension ServerOptions {
    /// Options from a configuration; `host` and `port` override the file's when given.
    public init(configuration c: ServerConfiguration, host: String? = nil, port: Int? = nil) {
        self.init(host: host ?? c.host ?? ServerConfiguration.defaultHost, port: port ?? c.port ?? ServerConfiguration.defaultPort)
        urlPrefix = c.urlPrefix ?? ""
        tlsCertificateChainFile = c.tls?.certificateChainPath
        tlsPrivateKeyFile = c.tls?.privateKeyPath
        sessions.serverName = c.servername
        if let name = c.nodeName { sessions.nodeName = name }
        if let link = c.controlLink { sessions.controlLink = link }
        drainMillis = c.timeouts.drainMillis
        sessions.sessionTimeoutMillis = c.timeouts.sessionTimeoutMillis
        sessions.recoveryWindowMillis = c.timeouts.recoveryWindowMillis
        sessions.sessionRecoveryMillis = max(sessions.sessionRecoveryMillis, c.timeouts.recoveryWindowMillis)
        sessions.minKeepaliveMillis = c.timeouts.keepaliveMillis.min
        sessions.maxKeepaliveMillis = c.timeouts.keepaliveMillis.max
        sessions.defaultKeepaliveMillis = c.timeouts.keepaliveMillis.default
        sessions.defaultContentLength = c.timeouts.contentLengthDefault
        sessions.maxUpdateDelayMillis = c.timeouts.maxUpdateDelayMillis
        c.limits.apply(to: &sessions)
        c.front.apply(to: &front)
        admin = c.admin
    }
}
