import ServiceLifecycle

/// An MPN store as a swift-service-lifecycle `Service`: the store (for PostgreSQL, its pooled
/// client and that client's connections) stays open until graceful shutdown or cancellation,
/// then `run()` closes it. In a `ServiceGroup` it comes before the MPN Module, which is shut
/// down first.
public struct MPNStoreService: Service {
    /// The store this service closes.
    public let store: any MPNStore

    public init(store: any MPNStore) {
        self.store = store
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await store.close()
    }
}
