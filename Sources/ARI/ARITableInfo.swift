import TLCP

/// One client subscription ("table") as NNT, NTC and MSA describe it (docs/ARI.md, "Methods": `NNT`, `NTC`, `MSA`).
/// `dataAdapter` and `items` are only on the wire in the 1.9 dialect; `statistics` only in 1.9
/// NTC.
public struct ARITableInfo: Sendable, Hashable {
    /// Identifies the subscription within its session; pairs NNT with NTC.
    public var windowIndex: Int
    public var mode: SubscriptionMode
    public var group: String
    public var dataAdapter: String
    public var schema: String
    /// 1-based positions of the subscription's first and last items in the group.
    public var firstItemIndex: Int
    public var lastItemIndex: Int
    public var selector: String?
    /// The resolved item names (1.9 dialect).
    public var items: [String]
    /// Per-item final statistics in 1.9 NTC (empty unless the remote asked for them).
    public var statistics: [ARIItemStatistics]

    public init(
        windowIndex: Int, mode: SubscriptionMode, group: String, dataAdapter: String = "DEFAULT",
        schema: String, firstItemIndex: Int, lastItemIndex: Int, selector: String? = nil,
        items: [String] = [], statistics: [ARIItemStatistics] = []
    ) {
        self.windowIndex = windowIndex
        self.mode = mode
        self.group = group
        self.dataAdapter = dataAdapter
        self.schema = schema
        self.firstItemIndex = firstItemIndex
        self.lastItemIndex = lastItemIndex
        self.selector = selector
        self.items = items
        self.statistics = statistics
    }

    /// Where a table appears: its layout differs in each place.
    public enum Context: Sendable, Hashable {
        case newTable, closedTable, mpnActivation
    }

    func write(to w: inout ARILineWriter, dialect: ARIDialect, context: Context) {
        w.integer(windowIndex)
        w.append(.modes(ARIModes(mode)))
        w.string(group)
        if dialect == .v1_9 { w.string(dataAdapter) }
        w.string(schema)
        w.integer(firstItemIndex)
        w.integer(lastItemIndex)
        if context != .mpnActivation { w.string(selector) }
        guard dialect == .v1_9 else { return }
        w.integer(items.count)
        for item in items { w.string(item) }
        if context == .closedTable {
            w.integer(statistics.count)
            for s in statistics {
                w.append(.long(s.realTimeUpdates))
                w.append(.long(s.lostUpdates))
                w.append(.long(s.filteredUpdates))
            }
        }
    }

    static func read(from r: inout ARIArgumentReader, dialect: ARIDialect, context: Context) throws(ARIProtocolError) -> ARITableInfo {
        let window = try r.integer()
        guard let mode = try r.singleMode().single else { throw .badValue(type: "M", value: "table mode") }
        let group = try r.nonNullString("group")
        let adapter = try dialect == .v1_9 ? r.nonNullString("data adapter") : "DEFAULT"
        let schema = try r.nonNullString("schema")
        let first = try r.integer()
        let last = try r.integer()
        let selector = try context == .mpnActivation ? nil : r.string()
        var table = ARITableInfo(
            windowIndex: window, mode: mode, group: group, dataAdapter: adapter, schema: schema,
            firstItemIndex: first, lastItemIndex: last, selector: selector)
        guard dialect == .v1_9 else { return table }
        let n = try r.count("item count", tokensPerElement: 2)
        for _ in 0..<n { table.items.append(try r.nonNullString("item")) }
        if context == .closedTable {
            let k = try r.count("statistics count", tokensPerElement: 6)
            for _ in 0..<k {
                table.statistics.append(
                    ARIItemStatistics(
                        realTimeUpdates: try r.long(), lostUpdates: try r.long(),
                        filteredUpdates: try r.long()))
            }
        }
        return table
    }
}

/// Final counts of one item of a closed table (1.9 NTC).
public struct ARIItemStatistics: Sendable, Hashable {
    public var realTimeUpdates: Int64
    public var lostUpdates: Int64
    public var filteredUpdates: Int64

    public init(realTimeUpdates: Int64, lostUpdates: Int64, filteredUpdates: Int64) {
        self.realTimeUpdates = realTimeUpdates
        self.lostUpdates = lostUpdates
        self.filteredUpdates = filteredUpdates
    }
}

/// An MPN device as MDA, MSA and MDC name it.
public struct ARIMPNDevice: Sendable, Hashable {
    public var platform: MPNPlatform?
    public var applicationId: String?
    public var deviceToken: String?

    public init(platform: MPNPlatform?, applicationId: String?, deviceToken: String?) {
        self.platform = platform
        self.applicationId = applicationId
        self.deviceToken = deviceToken
    }

    func write(to w: inout ARILineWriter) {
        w.append(.platform(platform))
        w.string(applicationId)
        w.string(deviceToken)
    }

    static func read(from r: inout ARIArgumentReader) throws(ARIProtocolError) -> ARIMPNDevice {
        guard case .platform(let p) = try r.value(.platform) else { throw .missingArgument(expected: "P") }
        return ARIMPNDevice(platform: p, applicationId: try r.string(), deviceToken: try r.string())
    }
}
