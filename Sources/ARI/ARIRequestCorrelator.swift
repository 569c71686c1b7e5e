import TLCP

/// Matches replies to the requests the proxy sent, without I/O: ids are handed out here, every
/// request has a deadline on the caller's clock, and the caller asks which requests expired
/// (`expire(now:)`) when the timer it armed for `nextDeadline` fires. A reply that comes after
/// its request expired is unknown, so it is ignored, as the protocol wants.
///
/// Bounded: at most `maxPending` requests wait at once; one more is refused.
public struct ARIRequestCorrelator<Context: Sendable>: Sendable {
    public struct Pending: Sendable {
        public var id: String
        public var method: ARIMethod
        public var deadline: Int64
        public var context: Context
    }

    public enum Match: Sendable {
        /// The reply answers this request, which is no longer pending.
        case matched(Pending)
        /// No pending request has this id (never sent, answered already, or expired).
        case unknownId
        /// The id is pending but under another method: the request fails with the reply.
        case methodMismatch(Pending)
    }

    public struct TooManyPending: Error, Sendable, Hashable {
        public var limit: Int
    }

    public let timeoutMillis: Int64
    public let maxPending: Int
    private var nextNumber: UInt64
    private var pending: [String: Pending] = [:]
    /// (deadline, id) sorted by deadline; entries of answered requests are dropped lazily.
    private var deadlines: [(deadline: Int64, id: String)] = []

    /// `firstId` ≥ 10 keeps clear of the ids the protocol reserves (`0` CLOSE, `1` RAC, `2` a
    /// remote's own FAL).
    public init(timeoutMillis: Int64, maxPending: Int = 10_000, firstId: UInt64 = 10) {
        self.timeoutMillis = max(1, timeoutMillis)
        self.maxPending = max(1, maxPending)
        self.nextNumber = max(10, firstId)
    }

    public var count: Int { pending.count }

    /// The earliest deadline among pending requests.
    public var nextDeadline: Int64? {
        deadlines.first(where: { pending[$0.id] != nil })?.deadline
    }

    /// Registers a request and returns the id to send it with.
    public mutating func register(
        _ method: ARIMethod, context: Context, now: Int64,
        timeoutMillis: Int64? = nil
    ) throws(TooManyPending) -> String {
        guard pending.count < maxPending else { throw TooManyPending(limit: maxPending) }
        let id = String(nextNumber)
        nextNumber = nextNumber == UInt64.max ? 10 : nextNumber + 1
        let deadline = Saturating.add(now, max(1, timeoutMillis ?? self.timeoutMillis))
        pending[id] = Pending(id: id, method: method, deadline: deadline, context: context)
        var at = deadlines.count
        while at > 0 && deadlines[at - 1].deadline > deadline { at -= 1 }
        deadlines.insert((deadline, id), at: at)
        compactIfNeeded()
        return id
    }

    /// Matches a reply's id and method.
    public mutating func resolve(id: String, method: ARIMethod) -> Match {
        guard let p = pending.removeValue(forKey: id) else { return .unknownId }
        compactIfNeeded()
        return p.method == method ? .matched(p) : .methodMismatch(p)
    }

    /// The request `id` without waiting for its reply (its caller gave up); nil if not pending.
    public mutating func cancel(id: String) -> Pending? {
        defer { compactIfNeeded() }
        return pending.removeValue(forKey: id)
    }

    /// Removes and returns the requests whose deadline is at or before `now`, earliest first.
    public mutating func expire(now: Int64) -> [Pending] {
        var expired: [Pending] = []
        var cut = 0
        while cut < deadlines.count && deadlines[cut].deadline <= now {
            if let p = pending.removeValue(forKey: deadlines[cut].id) { expired.append(p) }
            cut += 1
        }
        deadlines.removeFirst(cut)
        return expired
    }

    /// Removes and returns every pending request (the connection is gone).
    public mutating func removeAll() -> [Pending] {
        let all = deadlines.compactMap { pending[$0.id] }
        pending.removeAll()
        deadlines.removeAll()
        return all
    }

    /// Keeps the deadline list within twice the pending count.
    private mutating func compactIfNeeded() {
        guard deadlines.count > 2 * pending.count + 64 else { return }
        deadlines.removeAll { pending[$0.id] == nil }
    }
}
