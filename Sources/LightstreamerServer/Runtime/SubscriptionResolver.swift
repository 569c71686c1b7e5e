import TLCP

/// Turns a client's `add` into a `TableSpec` with the Metadata Adapter's help: item group and
/// field schema resolution, mode and frequency checks. Refusals carry the REQERR codes of
/// Appendix B (docs/protocol/TLCP.md §4.2).
struct SubscriptionResolver {
    var adapterSet: AdapterSet
    var user: String?
    var sessionId: String
    /// Most items a subscription may have once its group is expanded (REQERR 21 beyond).
    var maxItems = Int.max

    struct Resolved: Sendable {
        var spec: TableSpec
        var info: TableInfo
    }

    func resolve(_ p: SubscribeParameters) async throws(SessionRefusal) -> Resolved {
        let dataAdapter = p.dataAdapter ?? AdapterSet.defaultDataAdapterName
        guard adapterSet.dataAdapter(named: dataAdapter) != nil else {
            throw SessionRefusal(code: 17, message: "Data Adapter \(dataAdapter) not found")
        }
        let metadata = adapterSet.metadata(forDataAdapter: dataAdapter)
        let items: [String]
        do {
            items = try await metadata.items(user: user, sessionId: sessionId, group: p.group, dataAdapter: dataAdapter)
        } catch {
            throw Self.refusal(error, otherwise: 21, "Invalid item group")
        }
        guard !items.isEmpty else { throw SessionRefusal(code: 21, message: "Empty item group") }
        guard items.count <= maxItems else {
            throw SessionRefusal(code: 21, message: "Too many items in one subscription (\(items.count), at most \(maxItems))")
        }
        let fields: [String]
        do {
            fields = try await metadata.fields(user: user, sessionId: sessionId, group: p.group, dataAdapter: dataAdapter, schema: p.schema)
        } catch {
            throw Self.refusal(error, otherwise: 23, "Invalid field schema")
        }
        guard !fields.isEmpty else { throw SessionRefusal(code: 23, message: "Empty field schema") }
        do {
            try await metadata.prepareItemChecks(user: user, sessionId: sessionId, items: items)
        } catch {
            throw Self.refusal(error, otherwise: 66, "Subscription refused")
        }
        for item in items {
            guard await metadata.isModeAllowed(user: user, item: item, mode: p.mode) else {
                throw SessionRefusal(code: 24, message: "Mode \(p.mode.rawValue) not allowed for item \(item)")
            }
        }
        var keyPosition: Int?
        var commandPosition: Int?
        if p.mode == .command {
            guard let k = fields.firstIndex(of: "key") else { throw SessionRefusal(code: 15, message: "No key field") }
            guard let c = fields.firstIndex(of: "command") else { throw SessionRefusal(code: 16, message: "No command field") }
            keyPosition = k + 1
            commandPosition = c + 1
        }
        if case .length = p.snapshot, p.mode != .distinct {
            throw SessionRefusal(code: 65, message: "A snapshot length is allowed for DISTINCT only")
        }
        if p.mode == .raw, p.snapshot == .yes {
            throw SessionRefusal(code: 65, message: "RAW mode has no snapshot")
        }
        let itemLimit = await Self.lowestFrequency(of: items, user: user, metadata: metadata)
        var frequency = p.maxFrequency ?? .unlimited
        switch frequency {
        case .unfiltered:
            if itemLimit != nil { throw SessionRefusal(code: 26, message: "Unfiltered dispatching not allowed") }
        case .unlimited:
            if let itemLimit { frequency = .limited(itemLimit) }
        case .limited(let f):
            if let itemLimit { frequency = .limited(min(f, itemLimit)) }
        }
        if p.mode == .raw { frequency = .unfiltered }
        let info = TableInfo(
            mode: p.mode, group: p.group, schema: p.schema, dataAdapter: dataAdapter, items: items,
            fields: fields, selector: p.selector, subscriptionId: p.subscriptionId)
        do {
            try await metadata.notifyNewTable(user: user, sessionId: sessionId, table: info)
        } catch {
            throw Self.refusal(error, otherwise: 66, "Subscription refused")
        }
        let spec = TableSpec(
            adapterSet: adapterSet.name, dataAdapter: dataAdapter, mode: p.mode, items: items, fields: fields,
            selector: p.selector, snapshot: p.snapshot ?? .no, maxFrequency: frequency,
            bufferSize: p.bufferSize, keyPosition: keyPosition, commandPosition: commandPosition)
        return Resolved(spec: spec, info: info)
    }

    /// The frequency a reconf may ask for, clamped by the Metadata Adapter.
    func clamp(_ frequency: RequestedFrequency, items: [String]) async -> RequestedFrequency {
        let itemLimit = await Self.lowestFrequency(of: items, user: user, metadata: adapterSet.metadata)
        guard let itemLimit else { return frequency }
        switch frequency {
        case .unfiltered, .unlimited: return .limited(itemLimit)
        case .limited(let f): return .limited(min(f, itemLimit))
        }
    }

    /// The lowest of the Metadata Adapter's frequency limits for `items` (nil: none limited).
    static func lowestFrequency(of items: [String], user: String?, metadata: any MetadataAdapter) async -> Double? {
        var lowest: Double?
        for item in items {
            if let f = await metadata.allowedMaxFrequency(user: user, item: item) { lowest = min(lowest ?? f, f) }
        }
        return lowest
    }

    static func refusal(_ error: any Error, otherwise code: Int, _ message: String) -> SessionRefusal {
        switch error as? MetadataError {
        case .itemsNotFound(let m)?: return SessionRefusal(code: 21, message: m)
        case .schemaNotFound(let m)?: return SessionRefusal(code: 23, message: m)
        case .subscription(let c, let m)?: return SessionRefusal(code: c, message: m)
        case .access(let c, let m)?: return SessionRefusal(code: c, message: m)
        default: return SessionRefusal(code: code, message: "\(message): \(error)")
        }
    }

    /// The MSGFAIL code and message for a refusal of `notifyUserMessage`.
    static func messageRefusal(_ error: any Error) -> SessionRefusal {
        switch error as? MetadataError {
        case .message(let c, let m)?: return SessionRefusal(code: c > 0 ? 0 : c, message: m)
        case .notification(let m)?: return SessionRefusal(code: 34, message: m)
        default: return SessionRefusal(code: 35, message: "Metadata Adapter error")
        }
    }
}
