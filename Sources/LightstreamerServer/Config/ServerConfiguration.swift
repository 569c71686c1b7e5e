import Foundation

/// The server configuration file (JSON), described in docs/CONFIG.md with a complete example
/// in docs/config-example.json. Every key is optional except inside the sections that are
/// present; unknown keys are errors (a misspelt key is reported, never ignored).
public struct ServerConfiguration: Sendable, Decodable {
    /// The address listened on when neither the file nor the command line gives one.
    public static let defaultHost = "127.0.0.1"
    /// The port listened on when neither the file nor the command line gives one.
    public static let defaultPort = 8080
    /// The server name sent to clients when the file gives none.
    public static let defaultServerName = "Lightstreamer Swift Server"

    /// Certificate chain and private key (PEM files) to serve HTTPS/WSS.
    public struct TLS: Sendable, Hashable, Decodable {
        /// The PEM file with the certificate chain.
        public var certificateChainPath: String
        /// The PEM file with the private key.
        public var privateKeyPath: String

        /// TLS files given in code.
        public init(certificateChainPath: String, privateKeyPath: String) {
            self.certificateChainPath = certificateChainPath
            self.privateKeyPath = privateKeyPath
        }

        /// Decodes the `tls` object; both keys are required.
        public init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(["certificateChainPath", "privateKeyPath"])
            let c = try decoder.container(keyedBy: AnyCodingKey.self)
            certificateChainPath = try c.decode(String.self, forKey: .init(stringValue: "certificateChainPath"))
            privateKeyPath = try c.decode(String.self, forKey: .init(stringValue: "privateKeyPath"))
        }
    }

    /// Keepalive bounds (ms): a client's `LS_keepalive_millis` is clamped to `min…max`;
    /// `default` applies when it asks for none.
    public struct Keepalive: Sendable, Hashable, Decodable {
        /// The shortest keepalive granted, in milliseconds.
        public var min: Int
        /// The longest keepalive granted, in milliseconds.
        public var max: Int
        /// The keepalive granted when the client asks for none, in milliseconds.
        public var `default`: Int

        /// Bounds given in code (the defaults: 1 s, 30 s, 5 s).
        public init(min: Int = 1_000, max: Int = 30_000, default: Int = 5_000) {
            self.min = min
            self.max = max
            self.default = `default`
        }

        /// Decodes `keepaliveMillis`; `0 < min ≤ default ≤ max` is required.
        public init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(["min", "max", "default"])
            let c = try decoder.container(keyedBy: AnyCodingKey.self)
            let d = Keepalive()
            min = try c.decodeIfPresent(Int.self, forKey: .init(stringValue: "min")) ?? d.min
            max = try c.decodeIfPresent(Int.self, forKey: .init(stringValue: "max")) ?? d.max
            `default` = try c.decodeIfPresent(Int.self, forKey: .init(stringValue: "default")) ?? d.default
            guard min > 0, min <= `default`, `default` <= max else {
                throw decoder.invalid("expected 0 < min <= default <= max (got \(min), \(`default`), \(max))")
            }
        }
    }

    /// Session timings (all in milliseconds) and the default stream content length (bytes).
    public struct Timeouts: Sendable, Hashable, Decodable {
        /// How long an unbound session is kept before it is dropped.
        public var sessionTimeoutMillis: Int
        /// How long a session keeps sent data notifications for `LS_recovery_from`.
        public var recoveryWindowMillis: Int
        /// The keepalive bounds.
        public var keepaliveMillis: Keepalive
        /// Stream content length when the client sends none (or one too low).
        public var contentLengthDefault: Int
        /// After SIGTERM: how long sessions may stay while no new one is accepted (see
        /// `ServerOptions.drainMillis`).
        public var drainMillis: Int
        /// Longest delay the server may add to data notifications to send more of them per
        /// socket write (`SessionSettings.maxUpdateDelayMillis`): 0 to `maxUpdateDelayLimit`.
        public var maxUpdateDelayMillis: Int

        /// The largest `maxUpdateDelayMillis` accepted: a second, the shortest keepalive the
        /// server grants by default. A longer delay trades latency no live view can afford.
        public static let maxUpdateDelayLimit = 1_000

        static let keys = [
            "sessionTimeoutMillis", "recoveryWindowMillis", "keepaliveMillis", "contentLengthDefault", "drainMillis",
            "maxUpdateDelayMillis",
        ]

        /// Timings given in code (the defaults of docs/CONFIG.md).
        public init(
            sessionTimeoutMillis: Int = 10_000, recoveryWindowMillis: Int = 30_000,
            keepaliveMillis: Keepalive = Keepalive(), contentLengthDefault: Int = 50_000_000,
            drainMillis: Int = ServerOptions.defaultDrainMillis, maxUpdateDelayMillis: Int = 0
        ) {
            self.sessionTimeoutMillis = sessionTimeoutMillis
            self.recoveryWindowMillis = recoveryWindowMillis
            self.keepaliveMillis = keepaliveMillis
            self.contentLengthDefault = contentLengthDefault
            self.drainMillis = drainMillis
            self.maxUpdateDelayMillis = maxUpdateDelayMillis
        }

        /// Decodes the `timeouts` object.
        public init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(Self.keys)
            let c = try decoder.container(keyedBy: AnyCodingKey.self)
            let d = Timeouts()
            sessionTimeoutMillis = try c.positive("sessionTimeoutMillis", decoder) ?? d.sessionTimeoutMillis
            recoveryWindowMillis = try c.nonNegative("recoveryWindowMillis", decoder) ?? d.recoveryWindowMillis
            keepaliveMillis = try c.decodeIfPresent(Keepalive.self, forKey: .init(stringValue: "keepaliveMillis")) ?? d.keepaliveMillis
            contentLengthDefault = try c.positive("contentLengthDefault", decoder) ?? d.contentLengthDefault
            drainMillis = try c.nonNegative("drainMillis", decoder, atMost: ServerOptions.maxDrainMillis) ?? d.drainMillis
            maxUpdateDelayMillis =
                try c.nonNegative("maxUpdateDelayMillis", decoder, atMost: Self.maxUpdateDelayLimit) ?? d.maxUpdateDelayMillis
        }
    }

    /// The name sent to clients in `SERVNAME`.
    public var servername: String
    /// This node's name (`NodeName`); nil: the command line's, or the host name.
    public var nodeName: String?
    /// The CONOK control link (`ControlLink`); nil: `*`.
    public var controlLink: String?
    /// `text` or `json` (one JSON object per line, `JSONLogHandler`); nil: the command line's, or text.
    public var logFormat: String?
    /// The values `logFormat` accepts.
    public static let logFormats = ["text", "json"]
    /// nil: `defaultHost` (or the command line).
    public var host: String?
    /// nil: `defaultPort` (or the command line).
    public var port: Int?
    /// Path prefix before `/lightstreamer` (e.g. `/push`); nil or empty: none.
    public var urlPrefix: String?
    /// TLS files; nil serves plain HTTP and WebSocket.
    public var tls: TLS?
    /// Session timings.
    public var timeouts: Timeouts
    /// Also serve the built-in `DEMO` adapter set.
    public var demo: Bool
    /// The configured adapter sets.
    public var adapterSets: [AdapterSetConfiguration]
    /// The MPN Module's section, kept as raw JSON for that module to decode.
    public var mpn: ConfigJSON?
    /// Bounds on what clients may make sessions hold.
    public var limits: LimitsConfiguration
    /// Limits and timeouts of the connection layer (`ServerConfiguration+Front.swift`).
    public var front = Front()
    /// The administrator of the dashboard and the admin API (docs/ADMIN.md); nil: none.
    public var admin: AdminCredentials?

    static let keys = [
        "servername", "host", "port", "urlPrefix", "tls", "timeouts", "demo", "adapterSets", "mpn", "limits",
        "front", "nodeName", "controlLink", "logFormat", "admin",
    ]

    /// A configuration built in code rather than decoded.
    public init(
        servername: String = defaultServerName, host: String? = nil, port: Int? = nil, urlPrefix: String? = nil,
        tls: TLS? = nil, timeouts: Timeouts = Timeouts(), demo: Bool = true,
        adapterSets: [AdapterSetConfiguration] = [], mpn: ConfigJSON? = nil,
        limits: LimitsConfiguration = LimitsConfiguration()
    ) {
        self.limits = limits
        self.servername = servername
        self.host = host
        self.port = port
        self.urlPrefix = urlPrefix
        self.tls = tls
        self.timeouts = timeouts
        self.demo = demo
        self.adapterSets = adapterSets
        self.mpn = mpn
    }

    /// Decodes the whole file; see `decode(_:file:)` and `load(path:)`, which turn decoding
    /// errors into a `ConfigurationError`.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(Self.keys)
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        func key(_ s: String) -> AnyCodingKey { AnyCodingKey(stringValue: s) }
        servername = try c.decodeIfPresent(String.self, forKey: key("servername")) ?? Self.defaultServerName
        host = try c.decodeIfPresent(String.self, forKey: key("host"))
        port = try c.decodeIfPresent(Int.self, forKey: key("port"))
        if let port, !(1...65_535).contains(port) {
            throw decoder.invalid("expected a port number from 1 to 65535, got \(port)", at: key("port"))
        }
        if let name = try c.decodeIfPresent(String.self, forKey: key("nodeName")) {
            do {
                nodeName = try NodeName.validated(name)
            } catch {
                throw decoder.invalid(error.description, at: key("nodeName"))
            }
        }
        if let format = try c.decodeIfPresent(String.self, forKey: key("logFormat")) {
            guard Self.logFormats.contains(format) else {
                throw decoder.invalid("expected text or json, got \(format.logEscaped(limit: 40))", at: key("logFormat"))
            }
            logFormat = format
        }
        if let link = try c.decodeIfPresent(String.self, forKey: key("controlLink")) {
            do {
                controlLink = try ControlLink.validated(link)
            } catch {
                throw decoder.invalid(error.description, at: key("controlLink"))
            }
        }
        urlPrefix = try c.decodeIfPresent(String.self, forKey: key("urlPrefix"))
        if let urlPrefix, !urlPrefix.isEmpty, !urlPrefix.hasPrefix("/") {
            throw decoder.invalid("expected a path starting with '/'", at: key("urlPrefix"))
        }
        tls = try c.decodeIfPresent(TLS.self, forKey: key("tls"))
        timeouts = try c.decodeIfPresent(Timeouts.self, forKey: key("timeouts")) ?? Timeouts()
        demo = try c.decodeIfPresent(Bool.self, forKey: key("demo")) ?? false
        adapterSets = try c.decodeIfPresent([AdapterSetConfiguration].self, forKey: key("adapterSets")) ?? []
        mpn = try c.decodeIfPresent(ConfigJSON.self, forKey: key("mpn"))
        limits = try c.decodeIfPresent(LimitsConfiguration.self, forKey: key("limits")) ?? LimitsConfiguration()
        front = try c.decodeIfPresent(Front.self, forKey: key("front")) ?? Front()
        admin = try c.decodeIfPresent(AdminCredentials.self, forKey: key("admin"))

        var seen = Set<String>()
        for (i, set) in adapterSets.enumerated() {
            guard seen.insert(set.name).inserted else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath + [key("adapterSets"), AnyCodingKey(intValue: i), key("name")],
                        debugDescription: "duplicate adapter set name '\(set.name)'"))
            }
        }
        if demo && seen.contains(DemoAdapters.adapterSetName) {
            throw decoder.invalid(
                "\"demo\": true and an adapter set named \(DemoAdapters.adapterSetName) cannot be both used",
                at: key("demo"))
        }
        if adapterSets.isEmpty && !demo {
            throw decoder.invalid("no adapter set: add \"adapterSets\" or set \"demo\": true")
        }
    }

    /// Decodes a configuration from JSON text.
    public static func decode(_ data: Data, file: String? = nil) throws(ConfigurationError) -> ServerConfiguration {
        do {
            return try JSONDecoder().decode(ServerConfiguration.self, from: data)
        } catch let error as DecodingError {
            var e = ConfigurationError(error)
            e.file = file
            throw e
        } catch {
            throw ConfigurationError(path: "", message: "\(error)", file: file)
        }
    }

    /// Reads and decodes a configuration file.
    public static func load(path: String) throws(ConfigurationError) -> ServerConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(path: "", message: "cannot read the file (\(error.localizedDescription))", file: path)
        }
        return try decode(data, file: path)
    }

    /// The adapter sets to serve: the configured ones, plus `DEMO` when `demo` is true.
    public func makeAdapterSets(
        clock: any EngineClock = SystemEngineClock(),
        demoOptions: DemoAdapters.Options = .init()
    ) -> [AdapterSet] {
        var sets = adapterSets.map { $0.makeAdapterSet(clock: clock) }
        if demo { sets.append(DemoAdapters.makeDemoAdapterSet(options: demoOptions, clock: clock)) }
        return sets
    }
}

extension KeyedDecodingContainer where Key == AnyCodingKey {
    func positive(_ name: String, _ decoder: any Decoder) throws -> Int? {
        guard let v = try decodeIfPresent(Int.self, forKey: AnyCodingKey(stringValue: name)) else { return nil }
        guard v > 0 else { throw decoder.invalid("expected a number greater than 0, got \(v)", at: AnyCodingKey(stringValue: name)) }
        return v
    }

    /// A number of at least 0 and, with `atMost`, at most that many milliseconds.
    func nonNegative(_ name: String, _ decoder: any Decoder, atMost limit: Int? = nil) throws -> Int? {
        guard let v = try decodeIfPresent(Int.self, forKey: AnyCodingKey(stringValue: name)) else { return nil }
        guard v >= 0 else { throw decoder.invalid("expected a number of at least 0, got \(v)", at: AnyCodingKey(stringValue: name)) }
        if let limit, v > limit {
            throw decoder.invalid("expected at most \(limit) ms, got \(v)", at: AnyCodingKey(stringValue: name))
        }
        return v
    }

    func rate(_ name: String, _ decoder: any Decoder, required: Bool) throws -> Double? {
        let key = AnyCodingKey(stringValue: name)
        let value = required ? try decode(Double.self, forKey: key) : try decodeIfPresent(Double.self, forKey: key)
        guard let v = value else { return nil }
        guard v.isFinite, v >= 0, v <= 10_000 else {
            throw decoder.invalid("expected a rate from 0 to 10000 per second, got \(v)", at: key)
        }
        return v
    }
}
