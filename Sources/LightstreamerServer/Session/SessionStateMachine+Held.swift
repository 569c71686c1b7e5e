import TLCP

/// A session without a stream (its connection dropped and it waits for a recovery, or between
/// two polls, or between a LOOP and the rebind) holds the updates of its MERGE subscriptions
/// folded: each item keeps only its latest row (`SessionTable.held`), and the rows go into the
/// log, as deltas against what the client last got, when a stream binds. Without this every
/// update went into the log, and a session whose client went away grew by each update until
/// its timeout or `maxBacklogBytes`: thousands of dropped clients held gigabytes.
///
/// MERGE promises an item's latest state, not every change. `unfiltered` MERGE, MERGE with a
/// buffer of more than one update asked (`LS_requested_buffer_size`), DISTINCT, RAW and COMMAND
/// never fold, and neither do snapshot updates. Any other event of an
/// item (EOS, CS, OV, a snapshot update) puts the item's held row in the log first, so the
/// order within an item is kept.
extension SessionStateMachine {
    /// An update while the session has no stream (`isUnbound`, checked by the caller): held
    /// as the latest row of `item` if the subscription at `index` folds (true); otherwise the
    /// item's held row, if any, goes into the log first and the caller delivers the update
    /// (false).
    mutating func holdOrRelease(
        at index: Dictionary<Int, SessionTable>.Index, _ id: Int, item: Int, values: [String?], isSnapshot: Bool,
        now: Int64
    ) -> Bool {
        if !isSnapshot, hold(at: index, item: item, values: values) { return true }
        releaseHeld(at: index, id, item: item, now: now)
        return false
    }

    /// Holds `values` as the latest row of `item` if the subscription at `index` folds.
    private mutating func hold(at index: Dictionary<Int, SessionTable>.Index, item: Int, values: [String?]) -> Bool {
        let outcome = withTable(at: index) { t -> HoldOutcome in
            guard t.foldsWhileUnbound, let grant = t.grant, item >= 1, item <= grant.itemCount,
                values.count == grant.fieldCount
            else { return .delivered }
            if t.held.isEmpty { t.held = Array(repeating: nil, count: grant.itemCount) }
            let replaced = t.held[item - 1] != nil
            t.held[item - 1] = values
            return replaced ? .replaced : .held
        }
        switch outcome {
        case .delivered: return false
        case .held: holdsRows = true
        case .replaced: foldedWhileUnbound &+= 1
        }
        return true
    }

    private enum HoldOutcome { case delivered, held, replaced }

    /// The updates folded away since the last call (`ServerMetrics`' `updatesConflated`).
    mutating func takeFoldedCount() -> Int {
        defer { foldedWhileUnbound = 0 }
        return foldedWhileUnbound
    }

    /// Puts the held row of `item`, if any, in the log, before another event of that item.
    mutating func releaseHeld(at index: Dictionary<Int, SessionTable>.Index, _ id: Int, item: Int, now: Int64) {
        let values = withTable(at: index) { t -> [String?]? in
            guard item >= 1, item <= t.held.count, let values = t.held[item - 1] else { return nil }
            t.held[item - 1] = nil
            return values
        }
        if let values { deliver(at: index, id, .update(item: item, values: values, isSnapshot: false), shared: nil, now: now) }
    }

    /// Puts every held row in the log (subscriptions by id, items in order), before a stream
    /// binds; the holding ends.
    mutating func releaseAllHeld(now: Int64) {
        guard holdsRows, !isClosed else { return }
        holdsRows = false
        for id in tables.keys.sorted() {
            guard let index = tables.index(forKey: id) else { continue }
            let held = withTable(at: index) { t -> [[String?]?] in
                defer { t.held = [] }
                return t.held
            }
            for (i, values) in held.enumerated() {
                guard let values else { continue }
                deliver(at: index, id, .update(item: i + 1, values: values, isSnapshot: false), shared: nil, now: now)
            }
        }
    }
}
