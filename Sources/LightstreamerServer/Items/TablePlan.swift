/// A `TableSpec` checked against the adapter set and resolved into what the engine needs.
/// Built before any lock is taken: it awaits the Metadata Adapter's answers and calls the Data
/// Adapter's query methods.
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

    init(spec: TableSpec, user: String?, engine: ItemEngine) async throws(ItemEngineError) {
        guard let set = engine.adapterSets[spec.adapterSet] else { throw .badAdapterSet(spec.adapterSet) }
        guard let adapter = set.dataAdapter(named: spec.dataAdapter) else { throw .badDataAdapter(spec.dataAdapter) }
        guard !spec.items.isEmpty else { throw ItemEngineError(code: 21, message: "Empty item group") }
        guard !spec.fields.isEmpty else { throw ItemEngineError(code: 23, message: "Empty field schema") }
        let metadata = set.metadata(forDataAdapter: spec.dataAdapter)
        let mode = spec.mode
        for item in spec.items {
            guard await metadata.modeMayBeAllowed(item: item, mode: mode),
                await metadata.isModeAllowed(user: user, item: item, mode: mode)
            else { throw .modeNotAllowed(mode, item) }
        }

        var keyIndex: Int?
        var commandIndex: Int?
        if mode == .command {
            keyIndex = try Self.position(spec.keyPosition, named: ItemState.keyField, in: spec.fields, error: .noKeyField)
            commandIndex = try Self.position(
                spec.commandPosition, named: ItemState.commandField, in: spec.fields,
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
            let historyLimit = await metadata.distinctSnapshotLength(item: item)
            let distinctPossible = await metadata.modeMayBeAllowed(item: item, mode: .distinct)
            info[item] = ItemInfo(
                snapshotAvailable: adapter.isSnapshotAvailable(item: item),
                historyLimit: historyLimit, distinctPossible: distinctPossible)
            if let f = await metadata.allowedMaxFrequency(user: user, item: item), f.isFinite, f > 0 {
                if limit.map({ f < $0 }) ?? true { limit = f }
                limitedItem = limitedItem ?? item
            }
            if let b = await metadata.allowedBufferSize(user: user, item: item), b > 0 {
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

    private static func position(
        _ given: Int?, named name: String, in fields: [String],
        error: ItemEngineError
    ) throws(ItemEngineError) -> Int {
        if let given {
            guard given >= 1, given <= fields.count else { throw error }
            return given - 1
        }
        guard let i = fields.firstIndex(of: name) else { throw error }
        return i
    }
}
