/// Swift-concurrency views over the delegate API (our addition): status changes and item
/// updates as `AsyncStream`s, and `async` connect/subscribe that wait for the outcome. They are
/// built on ordinary delegates, so they see exactly what delegates see, in the same order.

/// A Sendable copy of an `ItemUpdate`.
public struct ItemUpdateSnapshot: Sendable, Equatable {
    /// The item's name, when the subscription was built with item names.
    public let itemName: String?
    /// The item's 1-based position in the subscription.
    public let itemPos: Int
    /// Whether the update is part of the item's snapshot.
    public let isSnapshot: Bool
    /// Values by 1-based field position.
    public let values: [Int: String?]
    /// Positions of the fields that changed.
    public let changedPositions: Set<Int>
    /// Field names (first level, then second level) when the subscription has field lists.
    public let fieldNames: [String]?

    /// The value of a named field; nil when unknown or null.
    public func value(_ fieldName: String) -> String? {
        guard let i = fieldNames?.firstIndex(of: fieldName) else { return nil }
        return values[i + 1] ?? nil
    }

    init(_ u: ItemUpdate) {
        itemName = u.itemName
        itemPos = u.itemPos
        isSnapshot = u.isSnapshot
        values = u.fieldsByPositions
        changedPositions = Set(u.changedFieldsByPositions.keys)
        fieldNames = (u as? ItemUpdateValue)?.fieldNames
    }
}

/// Errors of the async views.
public enum LightstreamerError: Error, Sendable, Equatable {
    /// The server refused or closed the session.
    case serverError(code: Int, message: String)
    /// The subscription failed.
    case subscriptionFailed(code: Int, message: String?)
    /// The client was disconnected while waiting.
    case disconnected
}

final class StatusStreamDelegate: ClientDelegate, Sendable {
    let continuation: AsyncStream<LightstreamerClient.Status>.Continuation
    init(_ c: AsyncStream<LightstreamerClient.Status>.Continuation) { continuation = c }
    func clientDidRemoveDelegate(_ client: LightstreamerClient) { continuation.finish() }
    func clientDidAddDelegate(_ client: LightstreamerClient) {}
    func client(_ client: LightstreamerClient, didReceiveServerError errorCode: Int, withMessage errorMessage: String) {}
    func client(_ client: LightstreamerClient, didChangeStatus status: LightstreamerClient.Status) { continuation.yield(status) }
    func client(_ client: LightstreamerClient, didChangeProperty property: String) {}
}

/// `@unchecked Sendable`: `continuation` is set before the delegate is added and taken (once) on the serial callback queue only.
final class ConnectWaiter: ClientDelegate, @unchecked Sendable {
    private var continuation: CheckedContinuation<LightstreamerClient.Status, Error>?
    init(_ c: CheckedContinuation<LightstreamerClient.Status, Error>) { continuation = c }
    private func finish(_ r: Result<LightstreamerClient.Status, Error>, _ client: LightstreamerClient) {
        guard let c = continuation else { return }
        continuation = nil
        c.resume(with: r)
        client.removeDelegate(self)
    }
    func clientDidRemoveDelegate(_ client: LightstreamerClient) {}
    func clientDidAddDelegate(_ client: LightstreamerClient) {}
    func client(_ client: LightstreamerClient, didReceiveServerError errorCode: Int, withMessage errorMessage: String) {
        finish(.failure(LightstreamerError.serverError(code: errorCode, message: errorMessage)), client)
    }
    func client(_ client: LightstreamerClient, didChangeStatus status: LightstreamerClient.Status) {
        if status.rawValue.hasPrefix("CONNECTED:") && status != .CONNECTED_STREAM_SENSING { finish(.success(status), client) }
    }
    func client(_ client: LightstreamerClient, didChangeProperty property: String) {}
}

extension LightstreamerClient {
    /// Status changes from now on, as an `AsyncStream` (ends when the stream is dropped).
    public func statusUpdates() -> AsyncStream<Status> {
        let (stream, continuation) = AsyncStream<Status>.makeStream()
        let delegate = StatusStreamDelegate(continuation)
        continuation.onTermination = { _ in self.removeDelegate(delegate) }
        addDelegate(delegate)
        return stream
    }

    /// Connects and waits for a connected status (streaming or polling). Throws the server
    /// error that stops the client, if any. The client keeps retrying on network errors.
    @discardableResult
    public func connectAndWait() async throws -> Status {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Status, Error>) in
            addDelegate(ConnectWaiter(c))
            connect()
        }
    }

    /// Subscribes and waits for the server's answer.
    public func subscribeAndWait(_ subscription: Subscription) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            subscription.addDelegate(SubscribeWaiter(c))
            subscribe(subscription)
        }
    }
}

/// `@unchecked Sendable`: `continuation` is set before the delegate is added and taken (once) on the serial callback queue only.
final class SubscribeWaiter: SubscriptionDelegate, @unchecked Sendable {
    private var continuation: CheckedContinuation<Void, Error>?
    init(_ c: CheckedContinuation<Void, Error>) { continuation = c }
    private func finish(_ r: Result<Void, Error>, _ s: Subscription) {
        guard let c = continuation else { return }
        continuation = nil
        c.resume(with: r)
        s.removeDelegate(self)
    }
    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {}
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {}
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidSubscribe(_ subscription: Subscription) { finish(.success(()), subscription) }
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) {
        finish(.failure(LightstreamerError.subscriptionFailed(code: code, message: message)), subscription)
    }
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {}
}

final class UpdateStreamDelegate: SubscriptionDelegate, Sendable {
    let continuation: AsyncStream<ItemUpdateSnapshot>.Continuation
    init(_ c: AsyncStream<ItemUpdateSnapshot>.Continuation) { continuation = c }
    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {}
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {}
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {}
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {
        continuation.yield(ItemUpdateSnapshot(itemUpdate))
    }
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) { continuation.finish() }
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidSubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) { continuation.finish() }
    func subscriptionDidUnsubscribe(_ subscription: Subscription) {}
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {}
}

extension Subscription {
    /// Item updates from now on, as an `AsyncStream` (ends if the subscription fails or the
    /// stream is dropped).
    public func updates(bufferingNewest limit: Int? = nil) -> AsyncStream<ItemUpdateSnapshot> {
        let policy: AsyncStream<ItemUpdateSnapshot>.Continuation.BufferingPolicy = limit.map { .bufferingNewest($0) } ?? .unbounded
        let (stream, continuation) = AsyncStream<ItemUpdateSnapshot>.makeStream(bufferingPolicy: policy)
        let delegate = UpdateStreamDelegate(continuation)
        continuation.onTermination = { _ in self.removeDelegate(delegate) }
        addDelegate(delegate)
        return stream
    }
}
