import LightstreamerServer
import NIOConcurrencyHelpers

/// A Data Adapter driven by hand (tests, benchmarks).
public final class ManualDataAdapter: DataAdapter {
    private let listener = NIOLockedValueBox<(any ItemEventListener)?>(nil)
    public let subscribed = NIOLockedValueBox<Set<String>>([])

    public init() {}

    public func setListener(_ l: any ItemEventListener) { listener.withLockedValue { $0 = l } }
    public func subscribe(item: String) async throws { subscribed.withLockedValue { _ = $0.insert(item) } }
    public func unsubscribe(item: String) async { subscribed.withLockedValue { _ = $0.remove(item) } }
    public func isSnapshotAvailable(item: String) -> Bool { false }

    public func push(_ item: String, _ fields: [String: String?]) {
        listener.withLockedValue { $0 }?.update(item: item, fields: fields, isSnapshot: false)
    }
}
