/// A notification the module owes a device, written to the store's outbox in the same
/// transaction as the change that made it due (a trigger firing: ACTIVE → TRIGGERED), deleted
/// once the provider accepted it, marked FAILED when it refused it for good. After a crash the
/// entries still PENDING are sent at the next start, so an acknowledged trigger never loses its
/// notification; a resend after an unknown outcome reuses the entry id as the provider's
/// identifier and collapse key (`MPNNotification.idempotencyKey`).
public struct MPNOutboxEntry: Sendable, Hashable {
    /// A lowercase UUID, fixed when the entry is written.
    public var id: String
    public var subscriptionId: String
    /// The device it goes to; its current token and platform are read when sending, so a token
    /// change meanwhile reaches the new token.
    public var deviceId: String
    /// The rendered payload (JSON text), with the AUTO badge already allocated.
    public var payload: String
    public var createdAt: MPNTimestamp
    public var status: MPNOutboxStatus
    /// Why it failed for good (FAILED only).
    public var failure: String?

    public init(
        id: String, subscriptionId: String, deviceId: String, payload: String, createdAt: MPNTimestamp,
        status: MPNOutboxStatus = .pending, failure: String? = nil
    ) {
        self.id = id
        self.subscriptionId = subscriptionId
        self.deviceId = deviceId
        self.payload = payload
        self.createdAt = createdAt
        self.status = status
        self.failure = failure
    }
}

public enum MPNOutboxStatus: String, Sendable, Hashable, CaseIterable {
    /// Not yet accepted by the provider.
    case pending = "PENDING"
    /// Refused for good (bad payload, dead token, retries exhausted): kept for inspection, never resent.
    case failed = "FAILED"
}

/// A trigger that fired, for `MPNStore.commitTriggers`: the store marks the subscription
/// TRIGGERED (compare-and-set), allocates the AUTO badge if `usesAutoBadge`, renders the
/// payload with it and writes the outbox entry, all in one transaction.
public struct MPNFiredTrigger: Sendable {
    public var subscriptionId: String
    public var deviceId: String
    public var usesAutoBadge: Bool
    /// The payload for a badge value (nil when the format has no AUTO badge); nil refuses the
    /// payload (over the platform limit): the entry is written FAILED with `refusal`.
    public var render: @Sendable (Int?) -> String?
    public var refusal: String

    public init(
        subscriptionId: String, deviceId: String, usesAutoBadge: Bool, refusal: String = "payload over the limit",
        render: @escaping @Sendable (Int?) -> String?
    ) {
        self.subscriptionId = subscriptionId
        self.deviceId = deviceId
        self.usesAutoBadge = usesAutoBadge
        self.render = render
        self.refusal = refusal
    }

    /// The entry for this trigger once it won, with a badge already allocated.
    func entry(badge: Int?, now: MPNTimestamp) -> MPNOutboxEntry {
        if let payload = render(badge) {
            return MPNOutboxEntry(
                id: MPNIdentifier.make(), subscriptionId: subscriptionId, deviceId: deviceId,
                payload: payload, createdAt: now)
        }
        return MPNOutboxEntry(
            id: MPNIdentifier.make(), subscriptionId: subscriptionId, deviceId: deviceId, payload: "",
            createdAt: now, status: .failed, failure: refusal)
    }
}
