/// Engine events waiting for a session's event loop (see `ServerSession.enqueueTableEvent`),
/// with MERGE conflation: while an update of an item of a MERGE subscription waits here, a
/// newer update of the same item replaces its values in place (latest values win). The
/// engine's rows are whole rows, so the session still sends the right delta against what the
/// client last got. Events wait here only when the session could not handle them at once (its
/// loop is behind, or its socket is full), and from the first waiting update of an item on,
/// the next one replaces it: a session that falls behind sends each item's latest state, never
/// an older one before it. (Until 2026-12-01 folding started only once 16 events waited, so
/// each item could go out twice, the older row first: at twice the machine's capacity that
/// older row made p99 1.2 s where folding from the first gives 0.25–0.28 s, BENCHMARKS.md,
/// "Updates folded from the first that waits".)
///
/// Never conflated: subscriptions asked `unfiltered` (and DISTINCT, RAW, COMMAND, which the
/// caller marks so), snapshot updates, and anything across another event of the same item
/// (an EOS, CS or OV keeps its place between the updates around it).
struct SessionInbox {
    /// An event of a subscription, in the form the engine sent it: an update every session
    /// of the item shares stays `EngineEvent.shared` here too (one reference to what the
    /// sessions share, where a `TableEvent` beside its encoding held two).
    typealias Entry = (subscriptionId: Int, event: EngineEvent)

    private struct ItemKey: Hashable {
        var subscriptionId: Int
        var item: Int
    }

    private(set) var events: [Entry] = []
    /// Where the latest waiting, still replaceable update of each MERGE item is in `events`.
    private var replaceable: [ItemKey: Int] = [:]
    /// The connection whose full socket holds the events here (`ServerSession.outputBlocked`),
    /// by its number (`ConnectionID.raw`, never 0); 0 when none does. While held, events wait
    /// here, MERGE updates folding, instead of being written behind what the client has not
    /// read. Kept by connection so that only the connection that asked can let go, and a
    /// session that moves to another connection is not held by the one it left.
    var heldBy: UInt64 = 0
    /// Updates replaced by a newer one since the last `takeConflatedCount()` (saturating; 32
    /// bits, so that the inbox stays four words beside `heldBy`).
    private var conflated: UInt32 = 0
    var drainScheduled = false

    var held: Bool { heldBy != 0 }

    var count: Int { events.count }

    /// `append(_:_:mergeable:)` for a `TableEvent` and the encoding its update may share.
    mutating func append(
        _ subscriptionId: Int, _ event: consuming TableEvent, mergeable: Bool, shared: consuming SharedUpdateEncoding? = nil
    ) {
        append(subscriptionId, .event(event, shared), mergeable: mergeable)
    }

    /// Appends `event`, or folds it into the waiting update of the same item when `mergeable`.
    mutating func append(_ subscriptionId: Int, _ event: consuming EngineEvent, mergeable: Bool) {
        let item: Int
        let isSnapshot: Bool
        switch event {
        case .shared(let i, let snapshot, _), .event(.update(let i, _, let snapshot), _):
            item = i
            isSnapshot = snapshot
        case .event(.endOfSnapshot(let i), _), .event(.clearSnapshot(let i), _), .event(.overflow(let i, _), _):
            if !replaceable.isEmpty { replaceable[ItemKey(subscriptionId: subscriptionId, item: i)] = nil }
            events.append((subscriptionId, event))
            return
        }
        let key = ItemKey(subscriptionId: subscriptionId, item: item)
        guard mergeable, !isSnapshot else {
            // No hashing for subscriptions that never fold (RAW, DISTINCT, COMMAND, unfiltered).
            if !replaceable.isEmpty { replaceable[key] = nil }
            events.append((subscriptionId, event))
            return
        }
        if let i = replaceable[key], i < events.count {
            // The newer update (not a snapshot, checked above) takes the older one's place,
            // with its own encoding, which still applies if the session's previous row
            // matches it (the session checks).
            events[i] = (subscriptionId, event)
            if conflated < .max { conflated += 1 }
        } else {
            replaceable[key] = events.count
            events.append((subscriptionId, event))
        }
    }

    /// Everything waiting, in order; the inbox is empty afterwards.
    mutating func take() -> [Entry] {
        defer {
            events.removeAll(keepingCapacity: true)
            replaceable.removeAll(keepingCapacity: true)
        }
        return events
    }

    mutating func takeConflatedCount() -> Int {
        defer { conflated = 0 }
        return Int(conflated)
    }
}
