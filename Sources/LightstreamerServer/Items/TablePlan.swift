/// A `TableSpec` checked against the adapter set and resolved into what the engine needs.
/// Built before any lock is taken: it calls the Metadata and Data Adapters' query methods.
struct TablePlan: Sendable {
    let adapterSet: String
    let dataAdapter: String
    let adapter: any DataAdapter
    let mode: SubscriptionMode
    let items: [String]
    /// `items` without repetitions, in order.
    let distinctItems: [String]
    let fields: [String]
    let keyIndex: Int?
    let commandIndex: Int?
    let selector: ItemSelector?
    let frequency: RequestedFrequency
    let metadataLimit: Double?
    let bufferLimit: Int?
    let wantsSnapshot: Bool
    /// DISTINCT: requested snapshot length (capped later by what each item keeps).
    let snapshotLength: Int
    /// Per item: whether the adapter sends a snapshot, how many DISTINCT events to keep, and
    /// whether DISTINCT may ever be used for it (only then the engine keeps its history before a
    /// DISTINCT subscription arrives).
    let itemInfo: [String: ItemInfo]

    struct ItemInfo: Sendable {
        var snapshotAvailable: Bool
        var historyLimit: Int
        var distinctPossible: Bool
    }

    init(spec: TableSpec, user: String?, engine: ItemEngine) throws(ItemEngineError) {
        guard let set = engine.adapterSets[spec.adapterSet] else { throw .badAdapterSet(spec.adapterSet) }
        guard let adapter = set.dataAdapter(named: spec.dataAdapter) else { throw .badDataAdapter(spec.dataAdapter) }
        guard !spec.items.isEmpty else { throw ItemEngineError(code: 21, message: "Empty item group") }
        guard !spec.fields.isEmpty else { throw ItemEngineError(code: 23, message: "Empty field schema") }
        let metadata = set.metadata(forDataAdapter: spec.dataAdapter)
        let mode = spec.mode
        for item in spec.items {
            guard metadata.modeMayBeAllowed(item: item, mode: mode),
                  metadata.isModeAllowed(user: user, item: item, mode: mode)
            else { throw .modeNotAllowed(mode, item) }
        }

        var keyIndex: Int?
        var commandIndex: Int?
        if mode == .command {
            keyIndex = try Self.position(spec.keyPosition, named: ItemState.keyField, in: spec.fields, error: .noKeyField)
            commandIndex = try Self.position(spec.commandPosition, named: ItemState.commandField, in: spec.fields,
                                             error: .noCommandField)
        }

        if let text = spec.selector, !text.isEmpty {
            selector = try ItemSelector(parsing: text, fields: spec.fields)
        } else {
            selector = nil
        }

        var limit: Double?
        var limitedItem: String?
        var bufferCap: Int?
        var info: [String: ItemInfo] = [:]
        var distinct: [String] = []
        for item in spec.items where info[item] == nil {
            distinct.append(item)
            info[item] = ItemInfo(snapshotAvailable: adapter.isSnapshotAvailable(item: item),
                                  historyLimit: metadata.distinctSnapshotLength(item: item),
                                  distinctPossible: metadata.modeMayBeAllowed(item: item, mode: .distinct))
            if let f = metadata.allowedMaxFrequency(user: user, item: item), f.isFinite, f > 0 {
                if limit.map({ f < $0 }) ?? true { limit = f }
                limitedItem = limitedItem ?? item
            }
            if let b = metadata.allowedBufferSize(user: user, item: item), b > 0 {
                bufferCap = min(bufferCap ?? b, b)
            }
        }
        if spec.maxFrequency == .unfiltered, mode != .raw, let limitedItem {
            throw .unfilteredNotAllowed(limitedItem)
        }

        var buffer: Int?
        switch (mode, spec.bufferSize) {
        case (.merge, nil): buffer = 1
        case (.merge, .size(let n)?), (.distinct, .size(let n)?): buffer = max(1, n)
        default: buffer = nil
        }
        if let bufferCap, mode == .merge || mode == .distinct { buffer = min(buffer ?? bufferCap, bufferCap) }

        switch spec.snapshot {
        case .no: snapshotLength = 0
        case .yes: snapshotLength = Int.max
        case .length(let n): snapshotLength = max(0, n)
        }

        self.adapterSet = spec.adapterSet
        self.dataAdapter = spec.dataAdapter
        self.adapter = adapter
        self.mode = mode
        self.items = spec.items
        self.distinctItems = distinct
        self.fields = spec.fields
        self.keyIndex = keyIndex
        self.commandIndex = commandIndex
        self.frequency = mode == .raw ? .unlimited : spec.maxFrequency
        self.metadataLimit = mode == .raw ? nil : limit
        self.bufferLimit = buffer
        self.wantsSnapshot = spec.snapshot != .no && mode != .raw
        self.itemInfo = info
    }

    private static func position(_ given: Int?, named name: String, in fields: [String],
                                 error: ItemEngineError) throws(ItemEngineError) -> Int {
        if let given {
            guard given >= 1, given <= fields.count else { throw error }
            return given - 1
        }
        guard let i = fields.firstIndex(of: name) else { throw error }
        return i
    }
}
