/// The state of `subscribe`'s live terminal table (no I/O): one row per item, or per key in
/// COMMAND mode, each cell with the time it last changed (for the highlight), the client status
/// and the number of updates received. `LiveTableRenderer` turns it into screen bytes.
///
/// Bounded: at most `rowCap` rows are kept; further rows (COMMAND keys, items of a large group)
/// are only counted, in a set of at most `hiddenCap` keys, and shown as "+N more".
struct LiveTable {
    /// One update as the table needs it (built from an `ItemUpdate`).
    struct Update {
        /// The item name, or its position when the subscription has a group.
        var item: String
        var values: [String?]
        var changed: [Bool]
        /// COMMAND mode: the key and command field values (nil in the other modes).
        var key: String?
        var command: String?
    }

    struct Row {
        /// The item, or item + key in COMMAND mode.
        var id: String
        var item: String
        var values: [String?]
        /// Per cell: the monotonic time (ms) of its last change, 0 when never changed.
        var changedAt: [UInt64]
    }

    /// Column titles after the first ("item"): the field names, or positions when unnamed
    /// (grown to the widest update seen).
    private(set) var columns: [String]
    private let named: Bool
    private(set) var rows: [Row] = []
    private var index: [String: Int] = [:]
    let rowCap: Int
    let hiddenCap: Int
    /// Ids of rows not kept because of the cap (bounded by `hiddenCap`).
    private(set) var hidden: Set<String> = []
    /// More rows were dropped than `hidden` could count.
    private(set) var hiddenOverflow = false
    var status = "DISCONNECTED"
    private(set) var totalUpdates: UInt64 = 0
    /// Something to redraw since the last `markDrawn()`.
    private(set) var dirty = true
    /// The time of the most recent cell change (for highlights still to fade).
    private(set) var lastChange: UInt64 = 0

    init(fields: [String]?, rowCap: Int = 1000, hiddenCap: Int = 100_000) {
        columns = fields ?? []
        named = fields != nil
        self.rowCap = max(1, rowCap)
        self.hiddenCap = max(0, hiddenCap)
    }

    mutating func setStatus(_ s: String) {
        if s != status {
            status = s
            dirty = true
        }
    }

    mutating func markDrawn() { dirty = false }

    /// Applies one update at monotonic time `now` (ms).
    mutating func apply(_ u: Update, now: UInt64) {
        totalUpdates &+= 1
        dirty = true
        if !named, u.values.count > columns.count {
            // Unnamed fields: positions, bounded by what the server sent (at most the values' count).
            columns += (columns.count..<u.values.count).map { String($0 + 1) }
        }
        let id = u.key.map { u.item + "\u{1F}" + $0 } ?? u.item
        if let command = u.command, command.uppercased() == "DELETE" {
            if let i = index[id] { remove(at: i) } else { hidden.remove(id) }
            return
        }
        if let i = index[id] {
            for (c, v) in u.values.enumerated() where c < rows[i].values.count {
                if rows[i].values[c] != v {
                    rows[i].values[c] = v
                    rows[i].changedAt[c] = now
                    lastChange = now
                }
            }
            if u.values.count > rows[i].values.count {
                rows[i].values += u.values[rows[i].values.count...]
                rows[i].changedAt += Array(repeating: now, count: u.values.count - rows[i].changedAt.count)
            }
            return
        }
        guard rows.count < rowCap else {
            if hidden.count < hiddenCap { hidden.insert(id) } else if !hidden.contains(id) { hiddenOverflow = true }
            return
        }
        hidden.remove(id)
        index[id] = rows.count
        // A new row: not highlighted (its first values are not a change).
        rows.append(Row(id: id, item: u.item, values: u.values, changedAt: Array(repeating: 0, count: u.values.count)))
    }

    /// Clear snapshot of `item`: its rows go (COMMAND), or its values become empty.
    mutating func clear(item: String) {
        dirty = true
        var i = rows.count - 1
        while i >= 0 {
            if rows[i].item == item { remove(at: i) }
            i -= 1
        }
        hidden = hidden.filter { !$0.hasPrefix(item + "\u{1F}") && $0 != item }
    }

    private mutating func remove(at i: Int) {
        index[rows[i].id] = nil
        rows.remove(at: i)
        for j in i..<rows.count { index[rows[j].id] = j }
        dirty = true
    }

    /// Rows not kept: "+N more" (N at least this).
    var hiddenCount: Int { hidden.count }
}

/// Updates per second over the last second or so, from (time, total) samples taken at each
/// redraw (at most `capacity` kept).
struct RateMeter {
    private var samples: [(time: UInt64, total: UInt64)] = []
    let window: UInt64
    let capacity: Int

    init(windowMillis: UInt64 = 1000, capacity: Int = 64) {
        window = max(1, windowMillis)
        self.capacity = max(2, capacity)
    }

    /// Records the total at `now` (ms) and returns the rate over the window.
    mutating func sample(now: UInt64, total: UInt64) -> Double {
        samples.append((now, total))
        // Keep one sample at or before the window's start.
        while samples.count > 2, now &- samples[1].time >= window { samples.removeFirst() }
        if samples.count > capacity { samples.removeFirst(samples.count - capacity) }
        guard let first = samples.first, now > first.time, total >= first.total else { return 0 }
        return Double(total - first.total) * 1000 / Double(now - first.time)
    }
}
