/// Per-subscription, per-item delivery state: the frequency limit, the buffer and the count of
/// lost events. A pure value: the engine feeds it updates and timer ticks and executes what it
/// returns (deliver now, arm a timer).
///
/// Rules:
/// - No limit (`interval == nil`: unlimited, unfiltered, RAW): every update goes out at once.
/// - With a limit: at most one update per `interval` per item. The first goes out at once;
///   the others wait in the buffer and leave one per tick.
///   - MERGE: the buffer holds whole rows (default 1). When it is full the newest waiting row
///     is replaced by the new one, so conflation keeps the latest values.
///   - DISTINCT: the buffer (default unlimited) drops its oldest event when full (filtered
///     subscription: silent loss, as the protocol allows).
///   - COMMAND: an UPDATE merges into a waiting ADD/UPDATE of the same key; a DELETE removes a
///     waiting UPDATE of its key. ADD and DELETE are never merged away; if the queue passes the
///     engine's safety cap the oldest entry is dropped and reported with OV.
/// - Every queue is bounded by `cap` (the engine's safety cap) even when "unlimited".
struct DeliveryGate: Sendable {
    struct Pending: Sendable {
        var values: [String?]
        /// COMMAND only.
        var key: String?
        var op: CommandOp?
    }

    /// Minimum nanoseconds between two deliveries; nil = no limit.
    var interval: UInt64?
    /// Most waiting updates (MERGE/DISTINCT); nil = unlimited.
    var bufferLimit: Int?
    /// COMMAND: 0-based position of the command field in the rows.
    var commandIndex: Int? = nil
    var lastDelivery: UInt64?
    var pending = FIFO<Pending>()
    /// Events dropped since the last OV was reported.
    var lost = 0
    /// Events replaced or dropped here to keep to the frequency limit since the engine last
    /// took the count (`takeFiltered`): MERGE conflation, DISTINCT buffer overflow, COMMAND
    /// merges. RAW drops are `lost` instead.
    var filtered = 0
    var timer: (any EngineTimer)?

    enum Offer {
        /// Deliver this update now.
        case deliver(Pending)
        /// Queued; arm a timer at this deadline if one is not armed.
        case queued(armAt: UInt64)
    }

    mutating func offer(_ update: Pending, mode: SubscriptionMode, now: UInt64, cap: Int) -> Offer {
        guard let interval else { return .deliver(update) }
        let readyAt = lastDelivery.map { $0 &+ interval } ?? 0
        if pending.isEmpty && now >= readyAt {
            lastDelivery = now
            return .deliver(update)
        }
        enqueue(update, mode: mode, cap: cap)
        return .queued(armAt: max(readyAt, now))
    }

    private mutating func enqueue(_ update: Pending, mode: SubscriptionMode, cap: Int) {
        let limit = min(bufferLimit ?? cap, cap)
        switch mode {
        case .merge:
            if pending.count >= max(1, limit) {
                pending[pending.count - 1] = update
                filtered += 1
            } else {
                pending.append(update)
            }
        case .distinct, .raw:
            pending.append(update)
            while pending.count > max(1, limit) {
                _ = pending.popFirst()
                if mode == .raw { lost += 1 } else { filtered += 1 }
            }
        case .command:
            enqueueCommand(update, cap: cap)
        }
    }

    private mutating func enqueueCommand(_ update: Pending, cap: Int) {
        if let key = update.key, let op = update.op,
            let i = pending.lastIndex(where: { $0.key == key })
        {
            let waiting = pending[i]
            switch (waiting.op, op) {
            case (.add?, .update), (.update?, .update):
                // Keep the waiting entry's command (an ADD stays an ADD) with the newest row.
                var merged = update
                merged.op = waiting.op
                if let c = commandIndex, c < merged.values.count, let op = waiting.op { merged.values[c] = op.rawValue }
                pending[i] = merged
                filtered += 1
                return
            case (.update?, .delete):
                pending.remove(at: i)
                filtered += 1
            default:
                break
            }
        }
        pending.append(update)
        while pending.count > max(1, cap) {
            _ = pending.popFirst()
            lost += 1
        }
    }

    /// The `filtered` count since the previous call.
    mutating func takeFiltered() -> Int {
        defer { filtered = 0 }
        return filtered
    }

    /// A timer tick: what leaves the buffer now, and when to tick again.
    mutating func release(now: UInt64) -> (lost: Int, update: Pending?, rearmAt: UInt64?) {
        timer = nil
        let lostNow = lost
        lost = 0
        guard let next = pending.popFirst() else { return (lostNow, nil, nil) }
        lastDelivery = now
        let rearm: UInt64? = pending.isEmpty ? nil : now &+ (interval ?? 0)
        return (lostNow, next, rearm)
    }

    /// Everything waiting, for when the limit goes away.
    mutating func flush() -> (lost: Int, updates: [Pending]) {
        timer?.cancel()
        timer = nil
        let out = Array(pending)
        pending.removeAll()
        let lostNow = lost
        lost = 0
        return (lostNow, out)
    }

    /// Drops what is waiting (a clear snapshot or the end of the subscription).
    mutating func reset() {
        timer?.cancel()
        timer = nil
        pending.removeAll()
        lost = 0
    }
}
