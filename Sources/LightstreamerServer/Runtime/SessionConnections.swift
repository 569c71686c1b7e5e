/// The connections a session writes to, by id. A session almost always has one (its stream's
/// WebSocket or HTTP response), kept inline; the others (a control connection's replies, a
/// stream replacing another) go in a dictionary that then allocates. A dictionary for the
/// one connection cost each idle session an allocation of 120 bytes (heaptrack,
/// BENCHMARKS.md "Session bookkeeping without allocations").
struct SessionConnections {
    private var firstID = ConnectionID(0)
    /// nil: no inline connection (`firstID` means nothing then).
    private var first: (any OutboundConnection)?
    private var others: [ConnectionID: any OutboundConnection] = [:]

    subscript(id: ConnectionID) -> (any OutboundConnection)? {
        get {
            if first != nil, firstID == id { return first }
            return others.isEmpty ? nil : others[id]
        }
        set {
            if first != nil, firstID == id {
                first = newValue
            } else if newValue != nil, first == nil, others[id] == nil {
                firstID = id
                first = newValue
            } else {
                others[id] = newValue
            }
        }
    }

    /// Removes the connection `id`, returning it.
    @discardableResult
    mutating func removeValue(forKey id: ConnectionID) -> (any OutboundConnection)? {
        let removed = self[id]
        self[id] = nil
        return removed
    }

    /// How many connections are registered (for tests).
    var count: Int { (first == nil ? 0 : 1) + others.count }
}
