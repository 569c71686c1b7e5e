import ARI

/// The remote Metadata Adapter's answers about items, kept for a short while: `GIT` (what an
/// item is) and `GUI` (what a user may do with it) are asked once per subscription for all its
/// items (`prepareItemChecks`), then the engine's per-item questions are answered from here.
/// No I/O; entries expire after `ttlMillis`, and at most `maxEntries` of each kind are kept
/// (beyond, expired ones go first, then everything).
struct RemoteItemChecks: Sendable {
    struct UserItem: Hashable, Sendable {
        var user: String?
        var item: String
    }

    var ttlMillis: Int64
    var maxEntries: Int
    private var items: [String: (data: ARIItemData, at: Int64)] = [:]
    private var userItems: [UserItem: (data: ARIUserItemData, at: Int64)] = [:]

    init(ttlMillis: Int64 = 10_000, maxEntries: Int = 10_000) {
        self.ttlMillis = ttlMillis
        self.maxEntries = max(1, maxEntries)
    }

    func item(_ name: String, now: Int64) -> ARIItemData? {
        guard let e = items[name], now - e.at < ttlMillis else { return nil }
        return e.data
    }

    func userItem(user: String?, item: String, now: Int64) -> ARIUserItemData? {
        guard let e = userItems[UserItem(user: user, item: item)], now - e.at < ttlMillis else { return nil }
        return e.data
    }

    mutating func store(items names: [String], _ data: [ARIItemData], now: Int64) {
        for (name, d) in zip(names, data) { items[name] = (d, now) }
        Self.trim(&items, max: maxEntries, ttl: ttlMillis, now: now)
    }

    mutating func store(user: String?, items names: [String], _ data: [ARIUserItemData], now: Int64) {
        for (name, d) in zip(names, data) { userItems[UserItem(user: user, item: name)] = (d, now) }
        Self.trim(&userItems, max: maxEntries, ttl: ttlMillis, now: now)
    }

    /// A new remote may answer differently.
    mutating func removeAll() {
        items.removeAll()
        userItems.removeAll()
    }

    var count: Int { items.count + userItems.count }

    private static func trim<K, V>(_ map: inout [K: (data: V, at: Int64)], max: Int, ttl: Int64, now: Int64) {
        guard map.count > max else { return }
        map = map.filter { now - $0.value.at < ttl }
        if map.count > max { map.removeAll() }
    }
}
