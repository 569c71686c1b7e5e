/// The items a remote Data Adapter serves for the engine, and the `SUB` id each one is
/// subscribed under, without I/O (docs/ARI.md). The remote tags every update with that id;
/// updates for an item under another id belong to a subscription that failed or ended, and are
/// dropped. The items the engine still wants are subscribed again when a remote reconnects.
struct RemoteDataSubscriptions: Sendable {
    enum Phase: Sendable, Hashable {
        /// `SUB` sent, no reply yet (a remote may send updates before its reply).
        case subscribing
        case active
    }

    struct Entry: Sendable, Hashable {
        var subscriptionId: String
        var phase: Phase
    }

    /// Items subscribed on the current connection, by item.
    private(set) var entries: [String: Entry] = [:]
    /// Items the engine subscribed and has not unsubscribed, whatever the remote's state.
    private(set) var wanted: Set<String> = []
    /// Wanted items whose own `subscribe` has not sent its `SUB` yet: that call sends it, so a
    /// remote that becomes ready meanwhile must not get a second one (`toSubscribeAgain`).
    private(set) var starting: Set<String> = []

    /// The engine asked for `item`; its `SUB` is about to go out.
    mutating func want(_ item: String) {
        wanted.insert(item)
        starting.insert(item)
    }

    /// A `SUB` for `item` went out with `id`.
    mutating func sent(_ item: String, id: String) {
        starting.remove(item)
        entries[item] = Entry(subscriptionId: id, phase: .subscribing)
    }

    /// The wanted items a newly ready remote must be asked for, sorted: neither subscribed on
    /// it nor about to be by their own `subscribe`.
    var toSubscribeAgain: [String] {
        wanted.filter { entries[$0] == nil && !starting.contains($0) }.sorted()
    }

    /// The reply to `SUB` `id` for `item` came: success or failure.
    mutating func replied(_ item: String, id: String, success: Bool) {
        guard entries[item]?.subscriptionId == id else { return }
        if success {
            entries[item]?.phase = .active
        } else {
            entries[item] = nil
            wanted.remove(item)
        }
    }

    /// The engine let `item` go; returns whether the remote has it (a `USB` is due).
    mutating func release(_ item: String) -> Bool {
        wanted.remove(item)
        starting.remove(item)
        return entries.removeValue(forKey: item) != nil
    }

    /// Whether a notification for `item` under `id` belongs to a live subscription.
    func accepts(item: String, id: String) -> Bool {
        entries[item]?.subscriptionId == id
    }

    /// The connection is gone: nothing is subscribed on the remote any more. Returns the
    /// items still wanted, sorted, to subscribe again on the next connection.
    mutating func connectionLost() -> [String] {
        entries.removeAll()
        return wanted.sorted()
    }
}
