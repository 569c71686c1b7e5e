import Logging

/// One adapter set of the configuration file: a name, metadata rules and simulated data
/// adapters (see docs/CONFIG.md).
public struct AdapterSetConfiguration: Sendable, Decodable {
    /// The adapter set's name (`LS_adapter_set`); required, not empty.
    public var name: String
    /// The set's metadata rules, or its remote Metadata Adapter.
    public var metadata: MetadataConfiguration
    /// The set's Data Adapters; at least one.
    public var dataAdapters: [DataAdapterConfiguration]
    /// This adapter set's MPN settings (e.g. apps), raw JSON for the MPN Module.
    public var mpn: ConfigJSON?
    /// How long the server's start waits for this set's remote adapters to connect.
    public var remoteWaitMillis: Int64 = 10_000

    /// A set built in code rather than decoded.
    public init(
        name: String, metadata: MetadataConfiguration = MetadataConfiguration(),
        dataAdapters: [DataAdapterConfiguration], mpn: ConfigJSON? = nil
    ) {
        self.name = name
        self.metadata = metadata
        self.dataAdapters = dataAdapters
        self.mpn = mpn
    }

    /// Decodes one entry of `adapterSets`; unknown keys are errors.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(["name", "metadata", "dataAdapters", "mpn", "remoteWaitMillis"])
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        name = try c.decode(String.self, forKey: .init(stringValue: "name"))
        guard !name.isEmpty else { throw decoder.invalid("expected a non-empty name", at: AnyCodingKey(stringValue: "name")) }
        metadata = try c.decodeIfPresent(MetadataConfiguration.self, forKey: .init(stringValue: "metadata")) ?? MetadataConfiguration()
        dataAdapters = try c.decode([DataAdapterConfiguration].self, forKey: .init(stringValue: "dataAdapters"))
        guard !dataAdapters.isEmpty else {
            throw decoder.invalid("expected at least one data adapter", at: AnyCodingKey(stringValue: "dataAdapters"))
        }
        var seen = Set<String>()
        for (i, adapter) in dataAdapters.enumerated() where !seen.insert(adapter.name).inserted {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [AnyCodingKey(stringValue: "dataAdapters"), AnyCodingKey(intValue: i)],
                    debugDescription: "duplicate data adapter name '\(adapter.name)'"))
        }
        mpn = try c.decodeIfPresent(ConfigJSON.self, forKey: .init(stringValue: "mpn"))
        remoteWaitMillis = Int64(try c.nonNegative("remoteWaitMillis", decoder) ?? 10_000)
    }

    /// The adapter set: simulated Data Adapters and a rule-based Metadata Adapter, or remote
    /// ones (their endpoints start with the server).
    public func makeAdapterSet(
        clock: any EngineClock = SystemEngineClock(),
        logger: Logger = Logger(label: "lightstreamer.remote")
    ) -> AdapterSet {
        var adapters: [String: any DataAdapter] = [:]
        var endpoints: [RemoteAdapterEndpoint] = []
        for d in dataAdapters {
            if let remote = d.remote {
                let endpoint = remote.makeEndpoint(adapterSet: name, dataAdapter: d.name, logger: logger)
                adapters[d.name] = RemoteDataAdapter(connection: endpoint.connection, logger: logger)
                endpoints.append(endpoint)
            } else {
                adapters[d.name] = d.makeDataAdapter(clock: clock)
            }
        }
        let metadataAdapter: any MetadataAdapter
        if let remote = metadata.remote {
            let endpoint = remote.makeEndpoint(adapterSet: name, dataAdapter: nil, logger: logger)
            metadataAdapter = RemoteMetadataAdapter(connection: endpoint.connection, logger: logger)
            endpoints.insert(endpoint, at: 0)
        } else {
            metadataAdapter = ConfiguredMetadataAdapter(rules: metadata.rules)
        }
        var set = AdapterSet(name: name, metadata: metadataAdapter, dataAdapters: adapters)
        set.remoteEndpoints = endpoints
        set.remoteWaitMillis = remoteWaitMillis
        return set
    }
}

/// Metadata rules: users, allowed modes and limits, per item pattern.
public struct MetadataConfiguration: Sendable, Decodable {
    /// The rules the `ConfiguredMetadataAdapter` applies.
    public var rules: ConfiguredMetadataAdapter.Rules
    /// A remote Metadata Adapter instead of the rules (then no rule key may be given).
    public var remote: RemoteAdapterConfiguration?

    /// Rules given in code (the defaults: anyone may log in, nothing is limited).
    public init(rules: ConfiguredMetadataAdapter.Rules = .init()) {
        self.rules = rules
    }

    static let keys = [
        "users", "refusalCode", "allowedModes", "maxFrequency", "bufferSize", "maxBandwidth",
        "distinctSnapshotLength", "messages", "items",
    ]

    /// Decodes a `metadata` object: either the rules or a `remote` object alone.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        func key(_ s: String) -> AnyCodingKey { AnyCodingKey(stringValue: s) }
        if c.contains(key("remote")) {
            try decoder.rejectUnknownKeys(["remote"])
            remote = try c.decode(RemoteAdapterConfiguration.self, forKey: key("remote"))
            rules = ConfiguredMetadataAdapter.Rules()
            return
        }
        try decoder.rejectUnknownKeys(Self.keys + ["remote"])
        var r = ConfiguredMetadataAdapter.Rules()
        r.users = try c.decodeIfPresent([String: String].self, forKey: key("users"))
        if let code = try c.decodeIfPresent(Int.self, forKey: key("refusalCode")) {
            guard code == 1 || code <= 0 else {
                throw decoder.invalid("expected 1 or a code of 0 or less, got \(code)", at: key("refusalCode"))
            }
            r.refusalCode = code
        }
        if let modes = try Self.modes(c, key("allowedModes"), decoder) { r.allowedModes = modes }
        r.maxFrequency = try Self.limit(c, key("maxFrequency"), decoder)
        r.bufferSize = try c.positive("bufferSize", decoder)
        r.maxBandwidth = try Self.limit(c, key("maxBandwidth"), decoder)
        r.distinctSnapshotLength = try c.nonNegative("distinctSnapshotLength", decoder) ?? r.distinctSnapshotLength
        if let text = try c.decodeIfPresent(String.self, forKey: key("messages")) {
            guard let policy = ConfiguredMetadataAdapter.MessagePolicy(rawValue: text) else {
                throw decoder.invalid("expected one of: accept, echo, refuse", at: key("messages"))
            }
            r.messages = policy
        }
        r.items = try c.decodeIfPresent([ItemRuleConfiguration].self, forKey: key("items"))?.map(\.rule) ?? []
        rules = r
    }

    static func modes(
        _ c: KeyedDecodingContainer<AnyCodingKey>, _ key: AnyCodingKey,
        _ decoder: any Decoder
    ) throws -> Set<SubscriptionMode>? {
        guard let names = try c.decodeIfPresent([String].self, forKey: key) else { return nil }
        var modes = Set<SubscriptionMode>()
        for name in names {
            guard let mode = SubscriptionMode(rawValue: name) else {
                throw decoder.invalid("unknown mode '\(name)'; expected MERGE, DISTINCT, COMMAND or RAW", at: key)
            }
            modes.insert(mode)
        }
        return modes
    }

    static func limit(_ c: KeyedDecodingContainer<AnyCodingKey>, _ key: AnyCodingKey, _ decoder: any Decoder) throws -> Double? {
        guard let v = try c.decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard v.isFinite, v > 0 else { throw decoder.invalid("expected a number greater than 0, got \(v)", at: key) }
        return v
    }
}

/// `metadata.items[]`: limits for the items matching `pattern` (`*` is a wildcard).
struct ItemRuleConfiguration: Decodable {
    var rule: ConfiguredMetadataAdapter.ItemRule

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(["pattern", "allowedModes", "maxFrequency", "bufferSize", "distinctSnapshotLength"])
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        func key(_ s: String) -> AnyCodingKey { AnyCodingKey(stringValue: s) }
        rule = ConfiguredMetadataAdapter.ItemRule(
            pattern: ItemPattern(try c.decode(String.self, forKey: key("pattern"))),
            allowedModes: try MetadataConfiguration.modes(c, key("allowedModes"), decoder),
            maxFrequency: try MetadataConfiguration.limit(c, key("maxFrequency"), decoder),
            bufferSize: try c.positive("bufferSize", decoder),
            distinctSnapshotLength: try c.nonNegative("distinctSnapshotLength", decoder))
    }
}

/// A simulated Data Adapter: its name in the set, a random seed and its items.
public struct DataAdapterConfiguration: Sendable, Decodable {
    /// The Data Adapter's name in the set (`LS_data_adapter`); `DEFAULT` when not given.
    public var name: String
    /// The random seed of the simulated items.
    public var seed: UInt64
    /// The simulated items by name (an entry with `count` declares several).
    public var items: [String: SimulatedDataAdapter.Behavior]
    /// A remote Data Adapter instead of simulated items.
    public var remote: RemoteAdapterConfiguration?

    /// A Data Adapter given in code.
    public init(
        name: String = AdapterSet.defaultDataAdapterName, seed: UInt64 = 1,
        items: [String: SimulatedDataAdapter.Behavior], remote: RemoteAdapterConfiguration? = nil
    ) {
        self.name = name
        self.seed = seed
        self.items = items
        self.remote = remote
    }

    /// Decodes one entry of `dataAdapters`: simulated items, or a `remote` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        name = try c.decodeIfPresent(String.self, forKey: .init(stringValue: "name")) ?? AdapterSet.defaultDataAdapterName
        if c.contains(.init(stringValue: "remote")) {
            try decoder.rejectUnknownKeys(["name", "remote"])
            remote = try c.decode(RemoteAdapterConfiguration.self, forKey: .init(stringValue: "remote"))
            seed = 1
            items = [:]
            return
        }
        try decoder.rejectUnknownKeys(["name", "seed", "items", "remote"])
        remote = nil
        seed = try c.decodeIfPresent(UInt64.self, forKey: .init(stringValue: "seed")) ?? 1
        let declared = try c.decode([ItemConfiguration].self, forKey: .init(stringValue: "items"))
        var items: [String: SimulatedDataAdapter.Behavior] = [:]
        for (i, item) in declared.enumerated() {
            for itemName in item.names {
                guard items.updateValue(item.behavior, forKey: itemName) == nil else {
                    throw DecodingError.dataCorrupted(
                        .init(
                            codingPath: decoder.codingPath + [AnyCodingKey(stringValue: "items"), AnyCodingKey(intValue: i)],
                            debugDescription: "item '\(itemName)' is declared twice"))
                }
            }
        }
        self.items = items
    }

    /// The simulated Data Adapter serving `items`.
    public func makeDataAdapter(clock: any EngineClock = SystemEngineClock()) -> SimulatedDataAdapter {
        SimulatedDataAdapter(items: items, clock: clock, seed: seed)
    }
}
