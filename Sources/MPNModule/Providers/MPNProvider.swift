import TLCP

/// One push notification ready for a provider.
public struct MPNNotification: Sendable, Hashable {
    public var platform: MPNPlatform
    public var applicationId: String
    public var deviceToken: String
    public var deviceId: String
    public var subscriptionId: String
    /// The rendered notification format (provider-native JSON).
    public var payload: JSONValue
    /// Sent because the subscription's trigger fired.
    public var triggered: Bool
    /// APNs `apns-collapse-id` (≤ 64 bytes), if any.
    public var collapseId: String?
    /// The same for every send of one notification (an outbox entry id, a lowercase UUID), so
    /// that a resend after an unknown outcome is recognised: APNs gets it as `apns-id` and, when
    /// the format sets none, as `apns-collapse-id`; FCM as `android.collapse_key` and the APNs
    /// `apns-collapse-id` header of the message when the format sets none (docs/RELIABILITY.md,
    /// "MPN Module", for what each provider guarantees).
    public var idempotencyKey: String?

    public init(
        platform: MPNPlatform, applicationId: String, deviceToken: String, deviceId: String,
        subscriptionId: String, payload: JSONValue, triggered: Bool = false, collapseId: String? = nil,
        idempotencyKey: String? = nil
    ) {
        self.platform = platform
        self.applicationId = applicationId
        self.deviceToken = deviceToken
        self.deviceId = deviceId
        self.subscriptionId = subscriptionId
        self.payload = payload
        self.triggered = triggered
        self.collapseId = collapseId
        self.idempotencyKey = idempotencyKey
    }
}

/// What a provider made of one notification, classified for the engine.
public enum MPNDeliveryResult: Sendable, Hashable {
    case delivered
    /// The token is dead (APNs 410/BadDeviceToken/Unregistered, FCM 404/UNREGISTERED): the
    /// device becomes SUSPENDED.
    case deviceInvalid(reason: String)
    /// Transient (429, 5xx, network, expired provider token): retry later, after `after` when
    /// the provider said so (Retry-After).
    case retry(after: Duration?, reason: String)
    /// The provider refused this notification for good (bad payload): drop it.
    case rejected(reason: String)
    /// The provider refused our credentials: logged as an alarm; retried later.
    case authenticationFailed(reason: String)
}

/// A push service for one application (APNs, FCM or the `log` test sink).
public protocol MPNProvider: Sendable {
    func send(_ notification: MPNNotification) async -> MPNDeliveryResult
    func shutdown() async
}

extension MPNProvider {
    public func shutdown() async {}
}

/// Reads the `reason` / FCM `errorCode` of an error body.
enum ProviderErrorBody {
    static func json(_ text: String) -> JSONValue? { try? JSONValue.parse(text) }

    static func member(_ value: JSONValue?, _ key: String) -> JSONValue? {
        guard case .object(let members)? = value else { return nil }
        return members.first { $0.key == key }?.value
    }

    static func string(_ value: JSONValue?) -> String? {
        if case .string(let s)? = value { return s }
        return nil
    }
}

extension MPNDeliveryResult {
    /// For a result worth retrying (`retry`, `authenticationFailed`): why, and the provider's
    /// own delay in milliseconds when it gave one.
    var retryReasonAndHint: (reason: String, hintMillis: Int64?) {
        switch self {
        case .retry(let after, let reason): return (reason, after.map(MPNRetryDelay.millis))
        case .authenticationFailed(let reason): return (reason, nil)
        default: return ("", nil)
        }
    }
}
