import NIOSSL

extension ServerConfiguration {
    /// The `front` section: limits and timeouts of the connection layer (docs/CONFIG.md,
    /// "Limits and timeouts"). Every key is optional; absent keys keep `FrontOptions`' defaults.
    public struct Front: Sendable, Hashable, Decodable {
        /// An address to listen on (the `adminListener` object).
        public struct Listener: Sendable, Hashable, Decodable {
            /// The address.
            public var host: String
            /// The port, 1 to 65535.
            public var port: Int

            /// A listener given in code.
            public init(host: String, port: Int) {
                self.host = host
                self.port = port
            }
        }

        /// From accept to the end of the TLS handshake (`FrontOptions.tlsHandshakeTimeoutMillis`).
        public var tlsHandshakeTimeoutMillis: Int?
        /// Until a request's head is complete (`FrontOptions.requestHeadTimeoutMillis`).
        public var requestHeadTimeoutMillis: Int?
        /// From a request's head to the end of its body (`FrontOptions.requestBodyTimeoutMillis`).
        public var requestBodyTimeoutMillis: Int?
        /// How long a keep-alive connection may wait for its next request.
        public var idleConnectionTimeoutMillis: Int?
        /// From a WebSocket upgrade until a session is created or bound on it.
        public var webSocketSessionTimeoutMillis: Int?
        /// Open connections on a listener; more are closed at accept.
        public var maxConnections: Int?
        /// Open connections from one client address; more are closed at accept.
        public var maxConnectionsPerAddress: Int?
        /// The largest request head (request line and headers), in bytes.
        public var maxRequestHeadBytes: Int?
        /// Bytes of a connection's output the kernel may keep unsent; 0: no limit of the server's
        /// (`FrontOptions.maxSocketUnsentBytes`).
        public var maxSocketUnsentBytes: Int?
        /// `Origin` values accepted; nil: all.
        public var allowedOrigins: [String]?
        /// Where to serve `/metrics` instead of on the main listener.
        public var adminListener: Listener?
        /// `"1.2"` or `"1.3"`.
        public var tlsMinimumVersion: String?

        static let positiveKeys = [
            "tlsHandshakeTimeoutMillis", "requestHeadTimeoutMillis", "requestBodyTimeoutMillis",
            "idleConnectionTimeoutMillis", "webSocketSessionTimeoutMillis", "maxConnections",
            "maxConnectionsPerAddress", "maxRequestHeadBytes",
        ]
        static let keys = positiveKeys + ["maxSocketUnsentBytes", "allowedOrigins", "adminListener", "tlsMinimumVersion"]

        /// No key set: every value keeps the default of `FrontOptions`.
        public init() {}

        /// Decodes the `front` object; unknown keys and out-of-range values are errors.
        public init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(Self.keys)
            let c = try decoder.container(keyedBy: AnyCodingKey.self)
            tlsHandshakeTimeoutMillis = try c.positive("tlsHandshakeTimeoutMillis", decoder)
            requestHeadTimeoutMillis = try c.positive("requestHeadTimeoutMillis", decoder)
            requestBodyTimeoutMillis = try c.positive("requestBodyTimeoutMillis", decoder)
            idleConnectionTimeoutMillis = try c.positive("idleConnectionTimeoutMillis", decoder)
            webSocketSessionTimeoutMillis = try c.positive("webSocketSessionTimeoutMillis", decoder)
            maxConnections = try c.positive("maxConnections", decoder)
            maxConnectionsPerAddress = try c.positive("maxConnectionsPerAddress", decoder)
            maxRequestHeadBytes = try c.positive("maxRequestHeadBytes", decoder)
            let unsentKey = AnyCodingKey(stringValue: "maxSocketUnsentBytes")
            maxSocketUnsentBytes = try c.nonNegative("maxSocketUnsentBytes", decoder)
            if let v = maxSocketUnsentBytes, v > SocketUnsentLimit.maximumBytes {
                throw decoder.invalid("expected at most \(SocketUnsentLimit.maximumBytes) bytes, got \(v)", at: unsentKey)
            }
            allowedOrigins = try c.decodeIfPresent([String].self, forKey: AnyCodingKey(stringValue: "allowedOrigins"))
            let listenerKey = AnyCodingKey(stringValue: "adminListener")
            adminListener = try c.decodeIfPresent(Listener.self, forKey: listenerKey)
            if let port = adminListener?.port, !(1...65_535).contains(port) {
                throw decoder.invalid("expected a port number from 1 to 65535, got \(port)", at: listenerKey)
            }
            let versionKey = AnyCodingKey(stringValue: "tlsMinimumVersion")
            tlsMinimumVersion = try c.decodeIfPresent(String.self, forKey: versionKey)
            if let v = tlsMinimumVersion, Self.tlsVersion(v) == nil {
                throw decoder.invalid("expected \"1.2\" or \"1.3\", got \"\(v)\"", at: versionKey)
            }
        }

        static func tlsVersion(_ text: String) -> TLSVersion? {
            switch text {
            case "1.2": .tlsv12
            case "1.3": .tlsv13
            default: nil
            }
        }

        /// These settings over the defaults.
        func apply(to o: inout FrontOptions) {
            if let v = tlsHandshakeTimeoutMillis { o.tlsHandshakeTimeoutMillis = v }
            if let v = requestHeadTimeoutMillis { o.requestHeadTimeoutMillis = v }
            if let v = requestBodyTimeoutMillis { o.requestBodyTimeoutMillis = v }
            if let v = idleConnectionTimeoutMillis { o.idleConnectionTimeoutMillis = v }
            if let v = webSocketSessionTimeoutMillis { o.webSocketSessionTimeoutMillis = v }
            if let v = maxConnections { o.maxConnections = v }
            if let v = maxConnectionsPerAddress { o.maxConnectionsPerAddress = v }
            if let v = maxRequestHeadBytes { o.maxRequestHeadBytes = v }
            if let v = maxSocketUnsentBytes { o.maxSocketUnsentBytes = v }
            if let v = allowedOrigins { o.allowedOrigins = v }
            if let l = adminListener { o.adminListener = (l.host, l.port) }
            if let v = tlsMinimumVersion.flatMap(Self.tlsVersion) { o.tlsMinimumVersion = v }
        }
    }
}
