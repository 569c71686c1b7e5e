/// The evolving values of one `SimulatedDataAdapter` item.
struct SimulatedItemState: Sendable {
    typealias Fields = [String: String?]
    typealias Behavior = SimulatedDataAdapter.Behavior

    struct Row: Sendable {
        var key: String
        var values: Fields
    }

    var rng: SeededGenerator
    private var counter = 0
    private var walk: [String: Double] = [:]
    /// COMMAND: rows present, in order, and rows deleted by churn (to add back later).
    private var rows: [Row] = []
    private var removed: [Row] = []

    init(behavior: Behavior, rng: SeededGenerator) {
        self.rng = rng
        switch behavior {
        case .staticValues:
            break
        case .counter(let c):
            counter = c.start
        case .randomWalk(let w):
            for (name, f) in w.fields { walk[name] = min(max(f.start, f.min), f.max) }
        case .commandTable(let t):
            for values in t.rows {
                guard case .some(.some(let key)) = values[ItemState.keyField] else { continue }
                rows.append(Row(key: key, values: values))
            }
        }
    }

    /// The item's current state as snapshot events.
    func snapshot(_ behavior: Behavior) -> [Fields] {
        switch behavior {
        case .staticValues(let values):
            return [values]
        case .counter(let c):
            var fields = c.constantFields
            for name in c.counterFields { fields[name] = .some(String(counter)) }
            return [fields]
        case .randomWalk(let w):
            var fields = w.constantFields
            for (name, f) in w.fields { fields[name] = .some(fixedDecimal(walk[name] ?? f.start, decimals: f.decimals)) }
            return [fields]
        case .commandTable:
            return rows.map { row in
                var values = row.values
                values[ItemState.commandField] = .some("ADD")
                return values
            }
        }
    }

    /// One change: the fields of the event to send (empty: nothing to send).
    mutating func step(_ behavior: Behavior) -> Fields {
        switch behavior {
        case .staticValues:
            return [:]
        case .counter(let c):
            counter = counter &+ c.step
            var fields: Fields = [:]
            for name in c.counterFields { fields[name] = .some(String(counter)) }
            return fields
        case .randomWalk(let w):
            var fields: Fields = [:]
            for name in w.fields.keys.sorted() {
                guard let f = w.fields[name] else { continue }
                let step = abs(f.step)
                let delta = step > 0 ? Double.random(in: -step...step, using: &rng) : 0
                let value = min(max((walk[name] ?? f.start) + delta, f.min), f.max)
                walk[name] = value
                fields[name] = .some(fixedDecimal(value, decimals: f.decimals))
            }
            return fields
        case .commandTable(let t):
            return stepTable(t)
        }
    }

    private mutating func stepTable(_ t: SimulatedDataAdapter.CommandTable) -> Fields {
        if t.churn, Int.random(in: 0..<5, using: &rng) == 0 {
            if !removed.isEmpty && (rows.isEmpty || Bool.random(using: &rng)) {
                let row = removed.remove(at: Int.random(in: 0..<removed.count, using: &rng))
                rows.append(row)
                var values = row.values
                values[ItemState.commandField] = .some("ADD")
                return values
            }
            if !rows.isEmpty {
                let row = rows.remove(at: Int.random(in: 0..<rows.count, using: &rng))
                removed.append(row)
                return [ItemState.keyField: .some(row.key), ItemState.commandField: .some("DELETE")]
            }
        }
        guard !rows.isEmpty, !t.updateFields.isEmpty else { return [:] }
        let index = Int.random(in: 0..<rows.count, using: &rng)
        var event: Fields = [ItemState.keyField: .some(rows[index].key), ItemState.commandField: .some("UPDATE")]
        for name in t.updateFields {
            guard case .some(.some(let text)) = rows[index].values[name], let value = Double(text),
                value.isFinite, abs(value) < 1e12
            else { continue }
            let isInteger = !text.contains(".")
            let spread = max(1, abs(value) * 0.05)
            var next = value + Double.random(in: -spread...spread, using: &rng)
            if next < 0 { next = -next }
            let newText = isInteger ? String(Int64(next.rounded())) : fixedDecimal(next, decimals: decimalsIn(text))
            rows[index].values[name] = .some(newText)
            event[name] = .some(newText)
        }
        return event
    }

    private func decimalsIn(_ text: String) -> Int {
        guard let dot = text.firstIndex(of: ".") else { return 0 }
        return text.distance(from: dot, to: text.endIndex) - 1
    }
}
