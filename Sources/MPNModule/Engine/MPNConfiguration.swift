import Foundation
import TLCP

/// The MPN section of the server's configuration file (JSON). Every field has a default, so
/// `{"enabled": true}` is a working test setup (SQLite file, `log` providers for any app).
///
/// ```json
/// { "enabled": true, "adapterSets": ["DEMO"],
///   "store": { "sqlitePath": "mpn.sqlite" },           // or "postgresURL": "postgres://u:p@host/db"
///   "apple":  [ { "id": "com.example.app", "serviceLevel": "production",
///                 "teamId": "ABCDE12345", "keyId": "KEY1234567", "keyFile": "AuthKey.p8" } ],
///   "google": [ { "id": "*", "serviceLevel": "test", "logFile": "mpn.jsonl" } ],
///   "pacing": { "minSendDelayMillis": 1000 },
///   "retry": { "initialDelayMillis": 1000, "maxDelayMillis": 600000, "maxAttempts": 6 },
///   "inactivity": { "deviceInactivityTimeoutMinutes": 10080, "collectorPeriodMinutes": 60 } }
/// ```
public struct MPNConfiguration: Codable, Sendable, Hashable {
    public var enabled: Bool = false
    /// Adapter sets with MPN; nil: all of them.
    public var adapterSets: [String]? = nil
    public var internalDataAdapterName: String = MPNInternalDataAdapter.defaultName
    public var store: Store = Store()
    /// Apple applications; the default accepts any app with the `test` (log) level.
    public var apple: [Application] = [Application(id: "*")]
    public var google: [Application] = [Application(id: "*")]
    public var pacing: Pacing = Pacing()
    public var retry: Retry = Retry()
    public var inactivity: Inactivity = Inactivity()
    public var limits: MPNLimits = MPNLimits()
    /// An MPN request not done by then (e.g. the database does not answer) is refused with 41.
    public var requestTimeoutMillis: Int = 15_000
    /// Cluster (PostgreSQL shared by several servers): this instance's name, kept across
    /// restarts so that it gets its devices back at once (nil: a new random one each start).
    public var moduleId: String? = nil
    /// How often an instance records it is alive and takes over the devices of dead ones.
    public var moduleCheckPeriodMillis: Int = 5_000
    /// An instance silent this long is presumed dead (more than every peer's check period).
    public var moduleTimeoutMillis: Int = 30_000

    public init() {}

    public struct Store: Codable, Sendable, Hashable {
        public var sqlitePath: String? = "mpn.sqlite"
        public var postgresURL: String? = nil
        public var postgresSchema: String? = nil
        public init(sqlitePath: String? = "mpn.sqlite", postgresURL: String? = nil, postgresSchema: String? = nil) {
            self.sqlitePath = sqlitePath
            self.postgresURL = postgresURL
            self.postgresSchema = postgresSchema
        }
    }

    public enum ServiceLevel: String, Codable, Sendable, Hashable {
        /// Notifications are written as JSON lines (`log` provider), nothing is sent.
        case test
        /// APNs sandbox.
        case development
        /// FCM `validate_only`.
        case dryRun = "dry_run"
        case production
    }

    public struct Application: Codable, Sendable, Hashable {
        /// Application id (bundle id / package name), or `*` for any.
        public var id: String
        public var serviceLevel: ServiceLevel = .test
        /// Apple token auth: team id, key id, .p8 file.
        public var teamId: String? = nil
        public var keyId: String? = nil
        public var keyFile: String? = nil
        /// `apns-topic` (default: the application id).
        public var topic: String? = nil
        /// Google: the service-account JSON file.
        public var serviceAccountFile: String? = nil
        /// Provider base URL override (tests, proxies).
        public var baseURL: String? = nil
        /// `test` level: JSON-lines file (standard error when nil).
        public var logFile: String? = nil
        /// Compatibility allow-list of trigger regexes; nil accepts every trigger (the trigger
        /// language is safe by construction), an empty list refuses all triggers.
        public var triggerAllowList: [String]? = nil

        public init(id: String, serviceLevel: ServiceLevel = .test) {
            self.id = id
            self.serviceLevel = serviceLevel
        }
    }

    public struct Pacing: Codable, Sendable, Hashable {
        /// Least time between two notifications to one device (trigger notifications exempt).
        public var minSendDelayMillis: Int = 1000
        /// Most notifications waiting per device (oldest dropped beyond).
        public var maxPendingPerDevice: Int = 100
        public init() {}
    }

    public struct Retry: Codable, Sendable, Hashable {
        public var initialDelayMillis: Int = 1000
        public var maxDelayMillis: Int = 600_000
        public var maxAttempts: Int = 6
        public init() {}

        /// Exponential backoff for the `attempt`-th retry (1-based), at least `hint` (a
        /// provider's Retry-After, already within one day). Configured values below 0 count as
        /// 0; the doubling saturates instead of overflowing.
        public func delayMillis(attempt: Int, hintMillis: Int64?) -> Int64 {
            let doublings = Saturating.clamp(Saturating.add(attempt, -1), to: 0...30)
            let exp = Saturating.multiply(Int64(max(0, initialDelayMillis)), Int64(1) << Int64(doublings))
            return max(min(exp, Int64(max(0, maxDelayMillis))), max(0, hintMillis ?? 0))
        }
    }

    public struct Inactivity: Codable, Sendable, Hashable {
        public var deviceInactivityTimeoutMinutes: Int = 10080
        public var collectorPeriodMinutes: Int = 60
        public init() {}
    }

    /// Whether MPN requests are served for `adapterSet`.
    public func isEnabled(for adapterSet: String) -> Bool {
        enabled && (adapterSets.map { $0.contains(adapterSet) } ?? true)
    }

    /// The application entry for (platform, app id): exact id first, then `*`.
    public func application(_ platform: MPNPlatform, _ id: String) -> Application? {
        let apps = platform == .apple ? apple : google
        return apps.first { $0.id == id } ?? apps.first { $0.id == "*" }
    }

    public static func decode(json: Data) throws -> MPNConfiguration {
        try JSONDecoder().decode(MPNConfiguration.self, from: json)
    }
}

extension MPNConfiguration {
    // Lenient decoding: every key optional.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = MPNConfiguration()
        enabled = try c.decodeIfPresent(Bool.self, forKey: .enabled) ?? d.enabled
        adapterSets = try c.decodeIfPresent([String].self, forKey: .adapterSets)
        internalDataAdapterName = try c.decodeIfPresent(String.self, forKey: .internalDataAdapterName) ?? d.internalDataAdapterName
        store = try c.decodeIfPresent(Store.self, forKey: .store) ?? d.store
        apple = try c.decodeIfPresent([Application].self, forKey: .apple) ?? d.apple
        google = try c.decodeIfPresent([Application].self, forKey: .google) ?? d.google
        pacing = try c.decodeIfPresent(Pacing.self, forKey: .pacing) ?? d.pacing
        retry = try c.decodeIfPresent(Retry.self, forKey: .retry) ?? d.retry
        inactivity = try c.decodeIfPresent(Inactivity.self, forKey: .inactivity) ?? d.inactivity
        limits = try c.decodeIfPresent(MPNLimits.self, forKey: .limits) ?? d.limits
        requestTimeoutMillis = try c.decodeIfPresent(Int.self, forKey: .requestTimeoutMillis) ?? d.requestTimeoutMillis
        moduleId = try c.decodeIfPresent(String.self, forKey: .moduleId)
        moduleCheckPeriodMillis = try c.decodeIfPresent(Int.self, forKey: .moduleCheckPeriodMillis) ?? d.moduleCheckPeriodMillis
        moduleTimeoutMillis = try c.decodeIfPresent(Int.self, forKey: .moduleTimeoutMillis) ?? d.moduleTimeoutMillis
    }
}

/// Lenient decoding of the nested configuration sections: every key is optional and falls back
/// to its default, so a config file only names what it changes.
extension MPNConfiguration.Store {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        sqlitePath = try c.decodeIfPresent(String.self, forKey: .sqlitePath)
        postgresURL = try c.decodeIfPresent(String.self, forKey: .postgresURL)
        postgresSchema = try c.decodeIfPresent(String.self, forKey: .postgresSchema)
        if sqlitePath == nil && postgresURL == nil { sqlitePath = "mpn.sqlite" }
    }
}

extension MPNConfiguration.Application {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeIfPresent(String.self, forKey: .id) ?? "*"
        serviceLevel = try c.decodeIfPresent(MPNConfiguration.ServiceLevel.self, forKey: .serviceLevel) ?? .test
        teamId = try c.decodeIfPresent(String.self, forKey: .teamId)
        keyId = try c.decodeIfPresent(String.self, forKey: .keyId)
        keyFile = try c.decodeIfPresent(String.self, forKey: .keyFile)
        topic = try c.decodeIfPresent(String.self, forKey: .topic)
        serviceAccountFile = try c.decodeIfPresent(String.self, forKey: .serviceAccountFile)
        baseURL = try c.decodeIfPresent(String.self, forKey: .baseURL)
        logFile = try c.decodeIfPresent(String.self, forKey: .logFile)
        triggerAllowList = try c.decodeIfPresent([String].self, forKey: .triggerAllowList)
    }
}

extension MPNConfiguration.Pacing {
    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        minSendDelayMillis = try c.decodeIfPresent(Int.self, forKey: .minSendDelayMillis) ?? minSendDelayMillis
        maxPendingPerDevice = try c.decodeIfPresent(Int.self, forKey: .maxPendingPerDevice) ?? maxPendingPerDevice
    }
}

extension MPNConfiguration.Retry {
    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        initialDelayMillis = try c.decodeIfPresent(Int.self, forKey: .initialDelayMillis) ?? initialDelayMillis
        maxDelayMillis = try c.decodeIfPresent(Int.self, forKey: .maxDelayMillis) ?? maxDelayMillis
        maxAttempts = try c.decodeIfPresent(Int.self, forKey: .maxAttempts) ?? maxAttempts
    }
}

extension MPNConfiguration.Inactivity {
    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        deviceInactivityTimeoutMinutes =
            try c.decodeIfPresent(Int.self, forKey: .deviceInactivityTimeoutMinutes)
            ?? deviceInactivityTimeoutMinutes
        collectorPeriodMinutes = try c.decodeIfPresent(Int.self, forKey: .collectorPeriodMinutes) ?? collectorPeriodMinutes
    }
}
