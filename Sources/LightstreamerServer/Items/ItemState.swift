/// The state of one upstream item, kept once however many subscriptions share it.
///
/// From the same event stream it maintains what each mode needs for snapshots: the current
/// row (MERGE), the most recent events (DISTINCT) and the table of keys (COMMAND, when events
/// carry the `key` and `command` fields). Subscriptions only hold their own delivery state.
struct ItemState: Sendable {
    typealias Fields = [String: String?]

    static let keyField = "key"
    static let commandField = "command"

    /// MERGE: last value of every field ever sent (nil = null).
    private(set) var row: Fields = [:]
    private(set) var hasRow = false
    /// DISTINCT: the last `historyLimit` events, oldest first. Kept (`keepsHistory`) when the
    /// Metadata Adapter may allow DISTINCT for the item, or from the moment a DISTINCT
    /// subscription uses it; so items that can never be DISTINCT do not pay for it.
    private(set) var history = FIFO<Fields>()
    let historyLimit: Int
    var keepsHistory: Bool
    /// COMMAND: current row of each key, with its insertion order.
    private var keys: [String: (order: UInt64, row: Fields)] = [:]
    private var nextOrder: UInt64 = 0
    /// False while the Data Adapter is still sending the snapshot.
    var snapshotComplete: Bool

    init(historyLimit: Int, snapshotFromAdapter: Bool, keepsHistory: Bool) {
        self.historyLimit = max(0, historyLimit)
        self.keepsHistory = keepsHistory
        self.snapshotComplete = !snapshotFromAdapter
    }

    /// One command event, normalized: `ADD` for a new key, `UPDATE` for a known one, `DELETE`
    /// for a known key that goes. `row` is the key's whole row (DELETE: key and command only).
    struct CommandChange: Sendable {
        var key: String
        var op: CommandOp
        var row: Fields
    }

    /// Applies an event to every view and returns the COMMAND change it makes, if any.
    mutating func apply(_ fields: Fields) -> CommandChange? {
        for (name, value) in fields { row[name] = .some(value) }
        hasRow = true
        if keepsHistory && historyLimit > 0 {
            history.append(fields)
            while history.count > historyLimit { _ = history.popFirst() }
        }
        return applyCommand(fields)
    }

    private mutating func applyCommand(_ fields: Fields) -> CommandChange? {
        guard case .some(.some(let key)) = fields[Self.keyField],
            case .some(.some(let commandText)) = fields[Self.commandField],
            let op = CommandOp(rawValue: commandText)
        else { return nil }
        switch op {
        case .add, .update:
            if var existing = keys[key] {
                for (name, value) in fields { existing.row[name] = .some(value) }
                existing.row[Self.commandField] = .some(CommandOp.update.rawValue)
                keys[key] = existing
                return CommandChange(key: key, op: .update, row: existing.row)
            }
            var newRow = fields
            newRow[Self.commandField] = .some(CommandOp.add.rawValue)
            nextOrder += 1
            keys[key] = (nextOrder, newRow)
            return CommandChange(key: key, op: .add, row: newRow)
        case .delete:
            guard keys.removeValue(forKey: key) != nil else { return nil }
            return CommandChange(key: key, op: .delete, row: Self.deleteRow(key: key))
        }
    }

    static func deleteRow(key: String) -> Fields {
        [keyField: .some(key), commandField: .some(CommandOp.delete.rawValue)]
    }

    /// The adapter cleared the item: nulls in the row, no history, no keys.
    mutating func clear() {
        for name in row.keys { row[name] = .some(nil) }
        history.removeAll()
        keys.removeAll()
    }

    /// COMMAND snapshot: the rows of the current keys in the order they were added, each with
    /// command `ADD`.
    var commandSnapshot: [(key: String, row: Fields)] {
        keys.sorted { $0.value.order < $1.value.order }.map { entry in
            var r = entry.value.row
            r[Self.commandField] = .some(CommandOp.add.rawValue)
            return (entry.key, r)
        }
    }

    /// DISTINCT snapshot: the last `n` events, oldest first.
    func distinctSnapshot(length n: Int) -> ArraySlice<Fields> {
        history.suffix(n)
    }
}

/// The values of the COMMAND mode's `command` field.
enum CommandOp: String, Sendable {
    case add = "ADD"
    case update = "UPDATE"
    case delete = "DELETE"
}

/// A row in a subscription's schema order.
func project(_ fields: [String: String?], onto schema: [String]) -> [String?] {
    schema.map { fields[$0] ?? nil }
}
