/// A run of a Data Adapter batch's updates fanned out table by table (`ItemEngine.adapterUpdates`).
///
/// Item by item, a session's events of a batch are spread over the whole fan-out (its ten
/// items come anywhere among the batch's hundred), so nothing could be posted before the
/// fan-out was done: a post split a session's events, and the session wrote once per post.
/// The event loops then waited for the producer's whole fan-out of a tick (some 1.4 ms at
/// 1,000 sessions and 6 ms at 5,000 on this project's machine) before writing the first
/// session. A round applies its updates to the items first, lists which tables each one goes
/// to, and then fans out table by table: every event of a table comes together, so the
/// round posts every `ItemEngine.eventsPerPost` events, between two tables, and the loops
/// write the first sessions while the producer still fans out to the others.
///
/// What a table receives is what item by item gives: its events of the round, in the
/// batch's order (the list is sorted by table with a stable counting sort), each computed
/// from the item's row as that update left it (`ProjectionCache.row`, kept when a later
/// update of the same item comes in the same round). A round takes only updates of items
/// whose snapshot is complete: what a snapshot does (served to the subscriptions waiting for
/// it, `EngineState.itemUpdate`) goes item by item as before. The whole round runs in one
/// locked section, so nothing else happens to its tables or items between its two passes.
struct TableMajorRound {
    /// One update of the round. A reference, so that fanning it out passes its fields
    /// without a retain per event (a struct in an array was copied out for each).
    final class Update {
        let fields: ItemState.Fields
        let change: ItemState.CommandChange?
        /// Touched by one thread at a time, under the engine's lock.
        @exclusivity(unchecked) var cache: ProjectionCache

        init(fields: ItemState.Fields, change: ItemState.CommandChange?, cache: ProjectionCache) {
            self.fields = fields
            self.change = change
            self.cache = cache
        }
    }

    /// One event to fan out: an update (index in `updates`) for a position of a table (the
    /// table's index in `tables`).
    struct Entry {
        let update: UInt32
        let pos: UInt32
        let slot: UInt32
    }

    /// The round's id (`EngineState.makeId`), marked on its items and tables.
    let id: UInt64
    private(set) var updates: [Update] = []
    /// Tables in the order the round met them; an entry's slot is the table's index here.
    private(set) var tables: [TableRecord] = []
    /// Entries in batch order.
    private var entries: [Entry] = []

    init(id: UInt64, expectedEntries: Int) {
        self.id = id
        entries.reserveCapacity(expectedEntries)
    }

    /// Events listed so far.
    var entryCount: Int { entries.count }

    /// Applies an update of `rec` (whose snapshot is complete) and lists its subscriptions.
    mutating func apply(_ rec: ItemRecord, fields: ItemState.Fields) {
        if rec.roundId == id, Int(rec.roundIndex) < updates.count {
            // An earlier update of this round keeps the row it made.
            updates[Int(rec.roundIndex)].cache.row = rec.state.row
        }
        let change = rec.state.apply(fields)
        let index = UInt32(truncatingIfNeeded: updates.count)
        rec.roundId = id
        rec.roundIndex = index
        updates.append(Update(fields: fields, change: change, cache: ProjectionCache(record: rec)))
        let subscribers = rec.subscribers
        for i in subscribers.indices {
            let slot = Unmanaged.passUnretained(subscribers[i].table)._withUnsafeGuaranteedRef { table -> UInt32 in
                if table.roundId == id { return table.roundSlot }
                let slot = UInt32(truncatingIfNeeded: tables.count)
                table.roundId = id
                table.roundSlot = slot
                tables.append(table)
                return slot
            }
            entries.append(Entry(update: index, pos: UInt32(truncatingIfNeeded: subscribers[i].first), slot: slot))
            // Further positions of the item in the same subscription (rare).
            if !subscribers[i].more.isEmpty {
                for pos in subscribers[i].more {
                    entries.append(Entry(update: index, pos: UInt32(truncatingIfNeeded: pos), slot: slot))
                }
            }
        }
    }

    /// The entries grouped by table (in `tables`' order), each table's in batch order, with
    /// where each table's group ends: a counting sort, as `QueuedPosts.grouped` does.
    mutating func takeByTable() -> (entries: [Entry], ends: [Int]) {
        var ends = [Int](repeating: 0, count: tables.count)
        for e in entries { ends[Int(e.slot)] += 1 }
        var sum = 0
        for k in ends.indices {
            sum += ends[k]
            ends[k] = sum
        }
        let n = entries.count
        var next = ends
        let sorted = [Entry](unsafeUninitializedCapacity: n) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            entries.withUnsafeBufferPointer { entries in
                next.withUnsafeMutableBufferPointer { next in
                    // From the last entry back, each to the end of its table's group: stable.
                    var i = n
                    while i > 0 {
                        i -= 1
                        let k = Int(entries[i].slot)
                        next[k] -= 1
                        (base + next[k]).initialize(to: entries[i])
                    }
                }
            }
            initialized = n
        }
        entries = []
        return (sorted, ends)
    }

    /// `entry`'s event for `table`: what `EngineState.itemUpdate` does for one subscriber.
    /// Returns true when the caller must drain the table.
    func dispatch(_ entry: Entry, to table: TableRecord, ctx: DispatchContext) -> Bool {
        let u = Int(entry.update)
        guard u < updates.count else { return false }
        return Unmanaged.passUnretained(updates[u])._withUnsafeGuaranteedRef { update in
            table.dispatchLive(pos: Int(entry.pos), fields: update.fields, change: update.change, cache: &update.cache, ctx: ctx)
        }
    }
}

extension EngineState {
    /// Whether `key`'s update can go in a `TableMajorRound` (its snapshot is complete, or the
    /// item has no record: the update goes nowhere either way).
    func takesTableMajor(_ key: ItemKey) -> Bool {
        items[key]?.state.snapshotComplete ?? true
    }

    /// Fans out `batch` from `start` table by table, as one round: updates while they go
    /// table-major and the round lists at most `maxEntries` events (at least one update).
    /// Posts through `direct` (`ctx.direct`) every `eventsPerPost` events at a table
    /// boundary, and what is left at the end. Returns where the round stopped, the events it
    /// fanned out, and the queues filled past their limit (to flush once unlocked); the tables
    /// it claimed are in `effects.drain`.
    mutating func fanOutTableMajor(
        _ batch: [ItemUpdateEvent], from start: Int, adapterSet: String, dataAdapter: String,
        maxEntries: Int, eventsPerPost: Int, direct: DirectPosts, ctx: DispatchContext, effects: inout Effects
    ) -> (next: Int, sent: Int, full: [any TableEventQueue]) {
        var round = TableMajorRound(id: makeId(), expectedEntries: min(lastRoundEntries, maxEntries))
        var next = start
        while next < batch.endIndex {
            let u = batch[next]
            let key = ItemKey(adapterSet: adapterSet, dataAdapter: dataAdapter, item: u.item)
            let rec = items[key]
            if let rec, !rec.state.snapshotComplete { break }
            if next > start,
                round.updates.count >= maxEntries
                    || round.entryCount + (rec?.subscribers.count ?? 0) > maxEntries
            {
                break
            }
            next += 1
            updatesReceived &+= 1
            if let rec { round.apply(rec, fields: u.fields) }
        }
        lastRoundEntries = round.entryCount
        // The posts are the round's, each a little more than `eventsPerPost` (up to the next
        // table boundary); the batch's item-by-item posts keep their own settings.
        let hint = direct.posts.reserveHint
        direct.round = round.id
        direct.posts.reserveHint = min(eventsPerPost + eventsPerPost / 4, maxEntries)
        defer {
            direct.round = 0
            direct.posts.reserveHint = hint
        }
        let tables = round.tables
        let (entries, ends) = round.takeByTable()
        var full: [any TableEventQueue] = []
        var first = 0
        var unposted = 0
        for slot in tables.indices {
            let table = tables[slot]
            let end = min(ends[slot], entries.count)
            var claim = false
            var i = first
            while i < end {
                if round.dispatch(entries[i], to: table, ctx: ctx) { claim = true }
                i &+= 1
            }
            if claim { effects.drain.append(table) }
            unposted &+= end &- first
            first = max(first, end)
            if unposted >= eventsPerPost {
                full.append(contentsOf: direct.post())
                unposted = 0
            }
        }
        full.append(contentsOf: direct.post())
        return (next, entries.count, full)
    }
}
