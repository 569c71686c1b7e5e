/// A named Adapter Set (`LS_adapter_set`): one Metadata Adapter and one or more Data
/// Adapters by name (`LS_data_adapter`, `DEFAULT` when absent).
public struct AdapterSet: Sendable {
    public static let defaultDataAdapterName = "DEFAULT"

    public var name: String
    public var metadata: any MetadataAdapter
    public var dataAdapters: [String: any DataAdapter]

    public init(name: String, metadata: any MetadataAdapter = LiteralBasedMetadataAdapter(),
                dataAdapters: [String: any DataAdapter]) {
        self.name = name
        self.metadata = metadata
        self.dataAdapters = dataAdapters
    }

    /// The data adapter for an `LS_data_adapter` value (nil → `DEFAULT`).
    public func dataAdapter(named name: String?) -> (any DataAdapter)? {
        dataAdapters[name ?? Self.defaultDataAdapterName]
    }
}
