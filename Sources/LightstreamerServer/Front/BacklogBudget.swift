import Synchronization

/// The server-wide bound on what clients that do not read make the server hold: bytes written
/// to connections while they are not writable (the kernel holding `maxSocketUnsentBytes` unsent
/// and more than `LightstreamerServer.writeBufferWaterMark.high` waiting in NIO). Each connection is bounded
/// by `maxBacklogBytes` on its own; this bounds them all together (`maxTotalBacklogBytes`), so
/// that many slow readers of an item whose every update must be delivered (RAW, DISTINCT,
/// COMMAND, `unfiltered`: MERGE updates fold instead, `ServerSession.outputBlocked`) cannot
/// hold connections × `maxBacklogBytes`.
///
/// A connection that writes while unwritable holds a share of what NIO holds unsent for it
/// (counted exactly then) plus what it writes, and gives it all back when it turns writable
/// again (what NIO holds is then below the low water mark) or goes away. A write the budget
/// cannot take closes its connection, as `maxBacklogBytes` would (the session may recover on
/// a new one). What a connection writes while writable is counted at its next write while
/// unwritable: the server may hold the budget plus, per connection, the water mark and one
/// drain.
final class BacklogBudget: Sendable {
    /// `maxTotalBacklogBytes`.
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Takes `bytes` unless that would pass the limit (then takes nothing and returns false).
    func take(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        let after = used.add(bytes, ordering: .relaxed).newValue
        if after > limit || after < 0 {
            used.subtract(bytes, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Gives back what a connection took.
    func give(_ bytes: Int) {
        guard bytes > 0 else { return }
        used.subtract(bytes, ordering: .relaxed)
    }

    /// Bytes taken now, by all connections.
    var inUse: Int { used.load(ordering: .relaxed) }
}

/// What one connection took from the `BacklogBudget` (32 bits, to fit in a handler's padding;
/// a take that would pass them fails like one past the budget).
struct BacklogBudgetShare {
    private(set) var taken: UInt32 = 0

    /// Takes `bytes` more from `budget`; false when it cannot (the caller closes the
    /// connection).
    mutating func take(_ bytes: Int, from budget: BacklogBudget) -> Bool {
        guard bytes > 0 else { return true }
        guard bytes <= Int(UInt32.max - taken), budget.take(bytes) else { return false }
        taken += UInt32(bytes)
        return true
    }

    /// Makes the share `bytes` (what the connection holds unsent now, with what it is about to
    /// write), taking the difference from `budget` or giving it back; false when the budget
    /// cannot take it.
    mutating func hold(_ bytes: Int, in budget: BacklogBudget) -> Bool {
        if bytes >= Int(taken) { return take(bytes - Int(taken), from: budget) }
        let excess = Int(taken) - max(0, bytes)
        budget.give(excess)
        taken -= UInt32(excess)
        return true
    }

    /// Gives everything taken back to `budget`.
    mutating func giveBack(to budget: BacklogBudget) {
        guard taken > 0 else { return }
        budget.give(Int(taken))
        taken = 0
    }
}
