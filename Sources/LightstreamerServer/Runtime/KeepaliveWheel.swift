import NIOConcurrencyHelpers
import NIOCore

/// The keepalive timers of the sessions of one event loop, fired from one repeating task
/// (and their `SYNC` timers, which are as many and as tolerant).
///
/// Every bound stream has a keepalive timer (docs/protocol/TLCP.md, `PROBE`), so an idle
/// server holds one per session. As NIO timers, each would be a scheduled task of its own and,
/// their deadlines being spread, each would wake the loop by itself. Here deadlines are
/// rounded up to a slot of `granularityMillis` and one task per slot's worth of time fires all
/// timers due: a timer fires at most one slot late, which a keepalive tolerates.
///
/// Cancelling is lazy: an entry stays until its slot comes and the session ignores it if the
/// timer was re-armed or cancelled since (its generation no longer matches). Deadlines beyond
/// `maxAheadMillis` are refused (`arm` returns false), so an entry outlives its session by
/// at most that long; the caller uses an ordinary timer for those.
final class KeepaliveWheel: Sendable {
    let eventLoop: any EventLoop
    let granularityMillis: Int64
    /// Longest time ahead a timer may be armed here.
    let maxAheadMillis: Int64

    /// 16 bytes: the session and, packed in one word, the timer's generation and which of the
    /// wheel's two timers it is. With the timer as a `SessionTimer` (an enum with a string in
    /// one case) an entry was 40 bytes, and every session has one or two.
    private struct Entry {
        let session: ServerSession
        /// The generation shifted left once, the low bit set for `sync`. A session's
        /// generations count its timers' armings from 1 (`SessionTimers`): they never reach
        /// 2^63.
        let packed: UInt64

        init(session: ServerSession, timer: SessionTimer, generation: UInt64) {
            self.session = session
            packed = generation &<< 1 | (timer == .sync ? 1 : 0)
        }

        var timer: SessionTimer { packed & 1 == 1 ? .sync : .keepalive }
        var generation: UInt64 { packed &>> 1 }
    }

    private struct State {
        /// Entries by slot (deadline / granularity, rounded up).
        var slots: [Int64: [Entry]] = [:]
        var ticking = false
    }

    private let state = NIOLockedValueBox(State())

    init(eventLoop: any EventLoop, granularityMillis: Int64, maxAheadMillis: Int64) {
        self.eventLoop = eventLoop
        self.granularityMillis = max(1, granularityMillis)
        self.maxAheadMillis = maxAheadMillis
    }

    /// Arms `timer` of `session` for `atMillis` (monotonic ms); false when it is too far ahead
    /// for the wheel, or is neither `keepalive` nor `sync`.
    func arm(_ session: ServerSession, _ timer: SessionTimer, generation: UInt64, atMillis: Int64, now: Int64) -> Bool {
        guard timer == .keepalive || timer == .sync, Saturating.subtract(atMillis, now) <= maxAheadMillis else { return false }
        let slot = Saturating.add(atMillis, granularityMillis - 1) / granularityMillis
        let start = state.withLockedValue { s -> Bool in
            s.slots[slot, default: []].append(Entry(session: session, timer: timer, generation: generation))
            if s.ticking { return false }
            s.ticking = true
            return true
        }
        if start { scheduleTick() }
        return true
    }

    /// Timers waiting (stale ones included), for tests.
    var pendingCount: Int { state.withLockedValue { $0.slots.values.reduce(0) { $0 + $1.count } } }

    private func scheduleTick() {
        eventLoop.scheduleTask(in: .milliseconds(granularityMillis)) { [self] in tick() }
    }

    private func tick() {
        let nowSlot = monotonicMillis() / granularityMillis
        let (due, more) = state.withLockedValue { s -> ([Entry], Bool) in
            var due: [Entry] = []
            for slot in s.slots.keys.filter({ $0 <= nowSlot }) {
                guard let entries = s.slots.removeValue(forKey: slot) else { continue }
                // Usually one slot is due: its array is taken as it is. Appended to an empty
                // one, every entry was copied (a retain and a release of its session, whose
                // object is cold by then) into a new array as large as the slot.
                if due.isEmpty { due = entries } else { due.append(contentsOf: entries) }
            }
            if s.slots.isEmpty { s.ticking = false }
            return (due, !s.slots.isEmpty)
        }
        for entry in due { entry.session.wheelTimerFired(entry.timer, generation: entry.generation) }
        if more { scheduleTick() }
    }
}
