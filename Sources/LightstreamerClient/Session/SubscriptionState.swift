import TLCP

/// One subscription inside the engine, with the decoding state of its items.
struct EngineSubscription {
    enum Phase: Equatable { case waiting, subscribing, subscribed, unsubscribing }

    /// Links a second-level (two-level COMMAND) subscription to its parent row.
    struct ParentLink: Equatable {
        var key: Int
        var item: Int
        var commandKey: String
    }

    struct Item {
        /// COMMAND: the item's values (the other modes keep them in `row`).
        var values: [String?]
        /// The values after the last update (not COMMAND), nil before the first.
        var row: FieldRow? = nil
        var received = false
        var inSnapshot: Bool
        /// COMMAND: current row per key (first-level fields, then second-level ones).
        var rows: [String: [String?]] = [:]
        /// Two-level COMMAND: the second-level subscription of each key.
        var children: [String: Int] = [:]
    }

    let key: Int
    var spec: SessionEngine.SubscriptionSpec
    var phase: Phase = .waiting
    var subscriptionId: Int?
    /// SUBOK/SUBCMD arrived in this session.
    var wasSubscribed = false
    /// Deleted because of an error: no `unsubscribed` event.
    var silentDelete = false
    var itemCount = 0
    var fieldCount = 0
    var keyPosition: Int?
    var commandPosition: Int?
    var items: [Item] = []
    var parent: ParentLink?
    /// Two-level COMMAND: the width of the second-level schema, once known.
    var secondLevelWidth = 0

    init(key: Int, spec: SessionEngine.SubscriptionSpec, parent: ParentLink? = nil) {
        self.key = key
        self.spec = spec
        self.parent = parent
    }

    var isInternal: Bool { parent != nil }

    func addParameters(_ subId: Int) -> SubscribeParameters {
        SubscribeParameters(
            subscriptionId: subId, mode: spec.mode, group: spec.group, schema: spec.schema,
            dataAdapter: spec.dataAdapter, selector: spec.selector, bufferSize: spec.bufferSize,
            maxFrequency: spec.maxFrequency, snapshot: spec.snapshot)
    }

    func itemName(_ pos: Int) -> String? {
        guard let items = spec.items, pos >= 1, pos <= items.count else { return nil }
        return items[pos - 1]
    }

    /// Field names for ItemUpdate: nil when a schema name is used at either level.
    var updateFieldNames: [String]? {
        guard let first = spec.fields else { return nil }
        if spec.hasSecondLevel {
            guard let second = spec.secondLevelFields else { return nil }
            return first + second
        }
        return first
    }

    /// Checks SUBOK/SUBCMD counts against the local lists. Nil when fine, else the problem.
    func countProblem(items n: Int, fields f: Int, keyPos: Int?, commandPos: Int?) -> String? {
        if let items = spec.items, items.count != n { return "Item count \(n) does not match the \(items.count) items requested" }
        if let fields = spec.fields, fields.count != f { return "Field count \(f) does not match the \(fields.count) fields requested" }
        // Checked before `confirm` allocates one slot per item (ServerNumbers).
        guard ServerNumbers.items.contains(n), ServerNumbers.fields.contains(f) else { return "Bad counts \(n) items, \(f) fields" }
        if spec.mode == .command {
            guard let k = keyPos, let c = commandPos, (1...f).contains(k), (1...f).contains(c) else {
                return "Bad key/command positions"
            }
        }
        return nil
    }

    mutating func confirm(items n: Int, fields f: Int, keyPos: Int?, commandPos: Int?) {
        phase = .subscribed
        wasSubscribed = true
        itemCount = n
        fieldCount = f
        keyPosition = keyPos
        commandPosition = commandPos
        let snapshotPhase = spec.snapshot != nil && spec.snapshot != SnapshotRequest.no && (spec.mode == .distinct || spec.mode == .command)
        items = Array(repeating: Item(values: [], inSnapshot: snapshotPhase), count: n)
    }

    /// What one U line means for this subscription.
    enum UpdateResult {
        case deliver(ItemUpdateValue)
        /// COMMAND: a row changed; `added`/`deleted` tell the two-level logic what to do.
        case command(ItemUpdateValue, key: String, added: Bool, deleted: Bool)
        case failure(String)
        case ignore
    }

    /// `apply(tokens:line:)`, with the parent link (two-level COMMAND) of this subscription.
    mutating func applyNotingParent(tokens: UpdateLineTokens, line: UnsafeBufferPointer<UInt8>) -> (UpdateResult, ParentLink?) {
        (apply(tokens: tokens, line: line), parent)
    }

    /// Applies one U line given as its scanned tokens (the hot path): the same outcome as
    /// `apply(_:)` on the line's `UpdateNotification`, without a `String` per value. COMMAND
    /// subscriptions, which key rows by value, go through `apply(_:)`.
    mutating func apply(tokens t: UpdateLineTokens, line: UnsafeBufferPointer<UInt8>) -> UpdateResult {
        guard phase == .subscribed else { return .ignore }
        if spec.mode == .command { return apply(t.notification(line: line)) }
        let pos = t.item
        guard pos >= 1, pos <= items.count else { return .failure("Update for item \(pos) of \(items.count)") }
        let first = !items[pos - 1].received
        let applied: (FieldRow, [Int: String])
        switch FieldRow.applying(t, line: line, to: first ? nil : items[pos - 1].row, width: fieldCount) {
        case .success(let a): applied = a
        case .failure(let refusal): return .failure(refusal.message)
        }
        items[pos - 1].row = applied.0
        items[pos - 1].received = true
        let snapshot: Bool
        switch spec.mode {
        case .raw, .command: snapshot = false
        case .merge: snapshot = first && spec.snapshot == .yes
        case .distinct: snapshot = items[pos - 1].inSnapshot
        }
        return .deliver(
            ItemUpdateValue(
                itemName: itemName(pos), itemPos: pos, isSnapshot: snapshot, row: applied.0,
                fieldNames: updateFieldNames, patches: applied.1))
    }

    /// Applies one U line (the hot path).
    mutating func apply(_ u: UpdateNotification) -> UpdateResult {
        guard phase == .subscribed else { return .ignore }
        let pos = u.item
        guard pos >= 1, pos <= items.count else { return .failure("Update for item \(pos) of \(items.count)") }
        let first = !items[pos - 1].received
        if first {
            items[pos - 1].values = Array(repeating: nil, count: fieldCount)
        } else {
            // The previous values are shared with the last ItemUpdate: a copy made here, in
            // specialized code, instead of the runtime's generic copy-on-write of `[String?]`.
            items[pos - 1].values = Self.copy(items[pos - 1].values)
        }
        let changed: [Bool]
        do {
            changed = try UpdateCodec.apply(u.values, to: &items[pos - 1].values, isFirst: first)
        } catch {
            return .failure(error.message)
        }
        items[pos - 1].received = true
        var patches: [Int: String] = [:]
        for (i, d) in u.values.enumerated() {
            if case .jsonPatch(let p) = d { patches[fieldIndex(ofToken: i, in: u.values)] = p }
        }
        let snapshot: Bool
        switch spec.mode {
        case .raw: snapshot = false
        case .merge: snapshot = first && spec.snapshot == .yes
        case .distinct, .command: snapshot = items[pos - 1].inSnapshot
        }
        if spec.mode == .command {
            return applyCommand(pos: pos, snapshot: snapshot, changedFirstLevel: changed)
        }
        return .deliver(
            ItemUpdateValue(
                itemName: itemName(pos), itemPos: pos, isSnapshot: snapshot,
                values: items[pos - 1].values, changed: changed,
                fieldNames: updateFieldNames, patches: patches))
    }

    /// (`reserveCapacity` + `append` allocate through specialized code; `Array(repeating:)` and
    /// `Array(unsafeUninitializedCapacity:)` go through the runtime's generic allocation, which
    /// looks the storage type's metadata up each time, and cost several times more.)
    private static func copy(_ values: [String?]) -> [String?] {
        var out: [String?] = []
        out.reserveCapacity(values.count)
        for v in values { out.append(v) }
        return out
    }

    /// The field index a token starts at (tokens may cover runs).
    private func fieldIndex(ofToken t: Int, in tokens: [FieldDelta]) -> Int {
        var i = 0
        for k in 0..<t { i += tokens[k].width }
        return i
    }

    private mutating func applyCommand(pos: Int, snapshot: Bool, changedFirstLevel: [Bool]) -> UpdateResult {
        guard let kp = keyPosition, let cp = commandPosition else { return .failure("COMMAND without key/command positions") }
        let values = items[pos - 1].values
        guard let rowKey = values[kp - 1] else { return .failure("COMMAND update without a key") }
        let command = values[cp - 1] ?? ""
        let old = items[pos - 1].rows[rowKey]
        let width = fieldCount + secondLevelWidth
        var row: [String?]
        var deleted = false
        if command == "DELETE" {
            row = Array(repeating: nil, count: width)
            row[kp - 1] = rowKey
            row[cp - 1] = command
            items[pos - 1].rows.removeValue(forKey: rowKey)
            deleted = true
        } else {
            row = values
            if let old, old.count > fieldCount {
                row.append(contentsOf: old[fieldCount...])
            }
            while row.count < width { row.append(nil) }
            items[pos - 1].rows[rowKey] = row
        }
        var changed = [Bool](repeating: false, count: row.count)
        for i in 0..<row.count {
            if let old {
                changed[i] = i < old.count ? old[i] != row[i] : row[i] != nil
            } else {
                changed[i] = i < fieldCount ? true : row[i] != nil
            }
        }
        _ = changedFirstLevel
        let update = ItemUpdateValue(
            itemName: itemName(pos), itemPos: pos, isSnapshot: snapshot, values: row,
            changed: changed, fieldNames: updateFieldNames)
        return .command(update, key: rowKey, added: old == nil && !deleted, deleted: deleted)
    }

    /// Two-level COMMAND: second-level values for a row arrived. Returns the update to deliver.
    mutating func applySecondLevel(item pos: Int, commandKey: String, values: [String?], changed: [Bool]) -> ItemUpdateValue? {
        guard pos >= 1, pos <= items.count, var row = items[pos - 1].rows[commandKey],
            let cp = commandPosition
        else { return nil }
        if secondLevelWidth < values.count {
            secondLevelWidth = values.count
        }
        let width = fieldCount + secondLevelWidth
        while row.count < width { row.append(nil) }
        var flags = [Bool](repeating: false, count: width)
        for (i, v) in values.enumerated() {
            row[fieldCount + i] = v
            flags[fieldCount + i] = changed[i]
        }
        if row[cp - 1] != "UPDATE" {
            row[cp - 1] = "UPDATE"
            flags[cp - 1] = true
        }
        items[pos - 1].rows[commandKey] = row
        return ItemUpdateValue(
            itemName: itemName(pos), itemPos: pos, isSnapshot: false, values: row, changed: flags,
            fieldNames: updateFieldNames)
    }
}
