/// A named Adapter Set (`LS_adapter_set`): one Metadata Adapter and one or more Data
/// Adapters by name (`LS_data_adapter`, `DEFAULT` when absent).
public struct AdapterSet: Sendable {
    /// The Data Adapter used when a subscription names none.
    public static let defaultDataAdapterName = "DEFAULT"

    /// The set's values. Every session keeps its adapter set: inline, they were 64 bytes of
    /// every session, idle or not (BENCHMARKS.md, "An idle session's objects in smaller size
    /// classes"); in one shared object they are a reference. A set changes only while a
    /// server is configured: a change makes a new object (copy on write).
    private struct Values: Sendable {
        var name: String
        var metadata: any MetadataAdapter
        var dataAdapters: [String: any DataAdapter]
        var serverOwnedDataAdapters: Set<String> = []
        var remoteEndpoints: [RemoteAdapterEndpoint] = []
        var remoteWaitMillis: Int64 = 10_000
    }

    private final class Storage: Sendable {
        let values: Values
        init(_ values: Values) { self.values = values }
    }

    private var storage: Storage

    private mutating func change(_ body: (inout Values) -> Void) {
        var values = storage.values
        body(&values)
        storage = Storage(values)
    }

    /// The name clients send as `LS_adapter_set`.
    public var name: String {
        get { storage.values.name }
        set { change { $0.name = newValue } }
    }
    /// The set's Metadata Adapter.
    public var metadata: any MetadataAdapter {
        get { storage.values.metadata }
        set { change { $0.metadata = newValue } }
    }
    /// The set's Data Adapters by name (the `LS_data_adapter` clients send).
    public var dataAdapters: [String: any DataAdapter] {
        get { storage.values.dataAdapters }
        set { change { $0.dataAdapters = newValue } }
    }
    /// Data adapters that belong to the server itself (the MPN Module's internal adapter):
    /// their groups and schemas are space-separated names and the Metadata Adapter's mode and
    /// frequency rules, written for the application's items, do not apply to them.
    public var serverOwnedDataAdapters: Set<String> {
        get { storage.values.serverOwnedDataAdapters }
        set { change { $0.serverOwnedDataAdapters = newValue } }
    }
    /// The remote adapters of this set (docs/ARI.md): the server listens for them at start.
    public var remoteEndpoints: [RemoteAdapterEndpoint] {
        get { storage.values.remoteEndpoints }
        set { change { $0.remoteEndpoints = newValue } }
    }
    /// How long the server's start waits for this set's remotes to connect.
    public var remoteWaitMillis: Int64 {
        get { storage.values.remoteWaitMillis }
        set { change { $0.remoteWaitMillis = newValue } }
    }

    /// A set with its Metadata Adapter (the literal one by default) and its Data Adapters by name.
    public init(
        name: String, metadata: any MetadataAdapter = LiteralBasedMetadataAdapter(),
        dataAdapters: [String: any DataAdapter]
    ) {
        storage = Storage(Values(name: name, metadata: metadata, dataAdapters: dataAdapters))
    }

    /// The Metadata Adapter that rules subscriptions to `dataAdapter`: the set's own; for a
    /// server-owned data adapter, the rules it brings (`ServerOwnedItemRules`, which may consult
    /// the set's adapter) or else the literal rules (space-separated names, nothing refused).
    public func metadata(forDataAdapter dataAdapter: String) -> any MetadataAdapter {
        guard serverOwnedDataAdapters.contains(dataAdapter) else { return metadata }
        if let rules = dataAdapters[dataAdapter] as? any ServerOwnedItemRules { return rules.metadata(consulting: metadata) }
        return LiteralBasedMetadataAdapter()
    }

    /// The data adapter for an `LS_data_adapter` value (nil → `DEFAULT`).
    public func dataAdapter(named name: String?) -> (any DataAdapter)? {
        dataAdapters[name ?? Self.defaultDataAdapterName]
    }
}

/// A server-owned data adapter that decides itself who may subscribe its items (the MPN
/// Module's internal items belong to one device each), consulting the application's Metadata
/// Adapter as it sees fit.
public protocol ServerOwnedItemRules: Sendable {
    /// The Metadata Adapter for subscriptions to this data adapter; `application` is the set's.
    func metadata(consulting application: any MetadataAdapter) -> any MetadataAdapter
}
