import ARI
import Logging
import NIOConcurrencyHelpers

/// A Data Adapter served by a remote process over ARI (the "proxy" side, docs/ARI.md): the
/// engine's subscribe/unsubscribe become `SUB`/`USB` requests, the remote's `UD3`/`EOS`/`CLS`
/// reach the listener. When the remote goes away the listener hears of it; when a remote
/// connects again, every item still subscribed is subscribed on it again.
public final class RemoteDataAdapter: DataAdapter, RemoteConnectionEvents {
    private struct State {
        var listener: (any ItemEventListener)?
        var subscriptions = RemoteDataSubscriptions()
    }

    let connection: RemoteAdapterConnection
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    init(connection: RemoteAdapterConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
        connection.setEvents(self)
    }

    // MARK: DataAdapter

    public func setListener(_ listener: any ItemEventListener) {
        state.withLockedValue { $0.listener = listener }
    }

    /// The remote sends its own snapshot flow: snapshot events then `EOS`, or `EOS` alone when
    /// its adapter has no snapshot for the item.
    public func isSnapshotAvailable(item: String) -> Bool { true }

    public func subscribe(item: String) async throws {
        state.withLockedValue { $0.subscriptions.want(item) }
        try await subscribeOnRemote(item)
    }

    public func unsubscribe(item: String) async {
        let due = state.withLockedValue { $0.subscriptions.release(item) }
        guard due else { return }
        do {
            _ = try await connection.request(.unsubscribe(item: item))
        } catch {
            logger.warning("remote unsubscribe failed", metadata: ["item": "\(item.logEscaped())", "error": "\(error)"])
        }
    }

    private func subscribeOnRemote(_ item: String) async throws {
        let sentId = NIOLockedValueBox<String?>(nil)
        do {
            _ = try await connection.send(.subscribe(item: item)) { [state] id in
                sentId.withLockedValue { $0 = id }
                state.withLockedValue { $0.subscriptions.sent(item, id: id) }
            }
            if let id = sentId.withLockedValue({ $0 }) {
                state.withLockedValue { $0.subscriptions.replied(item, id: id, success: true) }
            }
        } catch {
            if let id = sentId.withLockedValue({ $0 }) {
                state.withLockedValue { $0.subscriptions.replied(item, id: id, success: false) }
            } else {
                _ = state.withLockedValue { $0.subscriptions.release(item) }
            }
            throw Self.dataAdapterError(error)
        }
    }

    /// EU refuses the item (the client sees a subscription error); anything else is a failure.
    static func dataAdapterError(_ error: any Error) -> DataAdapterError {
        switch error as? RemoteRequestFailure {
        case .refused(.subscription(let m))?: return .subscription(m ?? "refused by the remote Data Adapter")
        case .refused(let e)?: return .failure("remote Data Adapter: \(e.tag) \(e.message ?? "")")
        case .timedOut?: return .failure("remote Data Adapter did not answer in time")
        case .unavailable?: return .failure("remote Data Adapter not connected")
        case .overloaded?: return .failure("too many requests waiting for the remote Data Adapter")
        case .malformedReply(let m)?: return .failure("unreadable reply from the remote Data Adapter: \(m)")
        case nil: return .failure("\(error)")
        }
    }

    // MARK: RemoteConnectionEvents

    func remoteReady(dialect: ARIDialect) {
        // Items wanted when the previous remote went away are subscribed on the new one.
        let items = state.withLockedValue { $0.subscriptions.toSubscribeAgain }
        guard !items.isEmpty else { return }
        logger.info("subscribing items again on the new remote", metadata: ["count": "\(items.count)"])
        for item in items {
            Task { [self] in try? await self.subscribeOnRemote(item) }
        }
    }

    func remoteNotifications(_ lines: [ARIRemoteLine]) {
        // The lines of current subscriptions, checked under one lock for the whole group.
        let (listener, accepted) = state.withLockedValue { s -> ((any ItemEventListener)?, [ARIRemoteLine]) in
            guard let listener = s.listener else { return (nil, []) }
            let accepted = lines.filter { line in
                switch line {
                case .update(let u): return s.subscriptions.accepts(item: u.item, id: u.subscriptionId)
                case .endOfSnapshot(let item, let id), .clearSnapshot(let item, let id):
                    return s.subscriptions.accepts(item: item, id: id)
                default: return false
                }
            }
            return (listener, accepted)
        }
        guard let listener, !accepted.isEmpty else { return }
        // Updates go as one batch up to the next end or clear of a snapshot, which keeps its
        // place between them.
        var batch: [ItemUpdateEvent] = []
        for line in accepted {
            if case .update(let u) = line {
                batch.append(ItemUpdateEvent(item: u.item, fields: u.fieldMap, isSnapshot: u.isSnapshot))
                continue
            }
            if !batch.isEmpty {
                listener.update(batch)
                batch.removeAll()
            }
            switch line {
            case .endOfSnapshot(let item, _): listener.endOfSnapshot(item: item)
            case .clearSnapshot(let item, _): listener.clearSnapshot(item: item)
            default: break
            }
        }
        if !batch.isEmpty { listener.update(batch) }
    }

    func remoteFailure(_ message: String?) {
        state.withLockedValue { $0.listener }?.failure(DataAdapterError.failure(message ?? "remote Data Adapter failure"))
    }

    func remoteLost() {
        let (listener, items) = state.withLockedValue { s in (s.listener, s.subscriptions.connectionLost()) }
        guard !items.isEmpty else { return }
        listener?.failure(DataAdapterError.failure("remote Data Adapter disconnected with \(items.count) items subscribed"))
    }
}
