/// What a shared store reports about changes made by any server on it (`MPNStore.watchChanges`).
public enum MPNStoreChange: Sendable, Hashable {
    /// The watch has (re)started: changes made while it was not listening are unknown, so
    /// everything should be read again.
    case resync
    /// The device, or one of its subscriptions, changed (created, updated or deleted).
    case device(String)
}

extension MPNStore {
    /// Stores with one instance (SQLite) have nobody else's changes to report: returns at once.
    public func watchChanges(_ onChange: @escaping @Sendable (MPNStoreChange) -> Void) async throws {}
}
