import NIOSSL

extension ServerConfiguration {
    /// The `front` section: limits and timeouts of the connection layer (docs/CONFIG.md,
    /// "Limits and timeouts"). Every key is optional; absent keys keep `FrontOptions`' defaults.
    public struct Front: Sendable, Hashable, Decodable {
        public struct Listener: Sendable, Hashable, Decodable {
            public var host: String
            public var port: Int

            public init(host: String, port: Int) {
                self.host = host
                self.port = port
            }
        }

        public var tlsHandshakeTimeoutMillis: Int?
        public var requestHeadTimeoutMillis: Int?
        public var requestBodyTimeoutMillis: Int?
        public var idleConnectionTimeoutMillis: Int?
        public var webSocketSessionTimeoutMillis: Int?
        public var maxConnections: Int?
        public var maxConnectionsPerAddress: Int?
        public var maxRequestHeadBytes: Int?
        public var allowedOrigins: [String]?
        public var adminListener: Listener?
        /// `"1.2"` or `"1.3"`.
        public var tlsMinimumVersion: String?

        static let positiveKeys = ["tlsHandshakeTimeoutMillis", "requestHeadTimeoutMillis", "requestBodyTimeoutMillis",
                                   "idleConnectionTimeoutMillis", "webSocketSessionTimeoutMillis", "maxConnections",
                                   "maxConnectionsPerAddress", "maxRequestHeadBytes"]
        static let keys = positiveKeys + ["allowedOrigins", "adminListener", "tlsMinimumVersion"]

        public init() {}

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
            if let v = allowedOrigins { o.allowedOrigins = v }
            if let l = adminListener { o.adminListener = (l.host, l.port) }
            if let v = tlsMinimumVersion.flatMap(Self.tlsVersion) { o.tlsMinimumVersion = v }
        }
    }
}
