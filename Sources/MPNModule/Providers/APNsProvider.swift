import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import TLCP

/// APNs token-based provider settings (one Apple application).
public struct APNsConfiguration: Sendable {
    public static let productionURL = "https://api.push.apple.com"
    public static let developmentURL = "https://api.development.push.apple.com"

    /// `productionURL`, `developmentURL`, or a test server.
    public var baseURL: String
    /// 10-character Team ID (`iss`).
    public var teamId: String
    /// 10-character Key ID of the .p8 key (`kid`).
    public var keyId: String
    /// The .p8 file contents (PKCS#8 PEM of a P-256 key).
    public var privateKeyPEM: String
    /// `apns-topic`: the bundle id (defaults to the application id).
    public var topic: String?
    /// How long a provider token is reused; clamped to Apple's 20...60 minutes.
    public var tokenRefreshInterval: Duration
    /// `apns-expiration` = now + this (nil: header left out, APNs stores per its default).
    public var expiration: Duration?
    public var requestTimeout: Duration

    public init(
        baseURL: String = APNsConfiguration.productionURL, teamId: String, keyId: String, privateKeyPEM: String,
        topic: String? = nil, tokenRefreshInterval: Duration = .seconds(50 * 60),
        expiration: Duration? = .seconds(24 * 3600), requestTimeout: Duration = .seconds(30)
    ) {
        self.baseURL = baseURL
        self.teamId = teamId
        self.keyId = keyId
        self.privateKeyPEM = privateKeyPEM
        self.topic = topic
        self.tokenRefreshInterval = tokenRefreshInterval
        self.expiration = expiration
        self.requestTimeout = requestTimeout
    }
}

/// The APNs provider token (ES256 JWT): reused for `refreshInterval` (20–60 min as Apple
/// requires), rebuilt after that or when APNs says it expired.
final class APNsTokenManager: Sendable {
    /// The key's raw bytes (the key type itself is not Sendable); rebuilt when signing.
    private let keyBytes: Data
    private let teamId: String
    private let keyId: String
    private let refreshSeconds: Int64
    private let clock: any MPNWallClock
    private let state = NIOLockedValueBox<(token: String, issuedAt: Int64)?>(nil)

    init(configuration c: APNsConfiguration, clock: any MPNWallClock) throws {
        keyBytes = try P256.Signing.PrivateKey(pemRepresentation: c.privateKeyPEM).rawRepresentation
        teamId = c.teamId
        keyId = c.keyId
        refreshSeconds = MPNProviderNumbers.seconds(c.tokenRefreshInterval, in: (20 * 60)...(60 * 60))
        self.clock = clock
    }

    /// The current token, rebuilt when older than the refresh interval.
    func token() throws -> String {
        let now = clock.nowSeconds
        return try state.withLockedValue { s in
            if let s, now - s.issuedAt < refreshSeconds, now >= s.issuedAt { return s.token }
            let jwt = try JWT.es256(
                header: [JSONMember(key: "alg", value: .string("ES256")), JSONMember(key: "kid", value: .string(keyId))],
                claims: [JSONMember(key: "iss", value: .string(teamId)), JSONMember(key: "iat", value: .number(String(now)))],
                key: P256.Signing.PrivateKey(rawRepresentation: keyBytes))
            s = (jwt, now)
            return jwt
        }
    }

    /// Forgets the token (APNs answered ExpiredProviderToken).
    func invalidate() { state.withLockedValue { $0 = nil } }
}

/// Sends to APNs over HTTP/2 (async-http-client negotiates h2 by ALPN) with token auth.
public final class APNsProvider: MPNProvider {
    public let configuration: APNsConfiguration
    private let applicationId: String
    private let client: HTTPClient
    private let ownsClient: Bool
    private let tokens: APNsTokenManager
    private let clock: any MPNWallClock
    private let logger: Logger
    /// HTTP status codes answered (`lightstreamer_mpn_provider_responses_total`).
    private let metrics: MPNMetrics?

    /// - Parameter httpClient: a shared client (tests pass one trusting their certificate);
    ///   nil creates one, shut down by `shutdown()`.
    public init(
        applicationId: String, configuration: APNsConfiguration, httpClient: HTTPClient? = nil,
        clock: any MPNWallClock = SystemWallClock(), logger: Logger = Logger(label: "lightstreamer.mpn.apple"),
        metrics: MPNMetrics? = nil
    ) throws {
        self.metrics = metrics
        // The key first: a client made before a throw would trap when deinitialized unshut.
        self.tokens = try APNsTokenManager(configuration: configuration, clock: clock)
        self.applicationId = applicationId
        self.configuration = configuration
        self.client = httpClient ?? HTTPClient(eventLoopGroupProvider: .singleton)
        self.ownsClient = httpClient == nil
        self.clock = clock
        self.logger = logger
    }

    public func shutdown() async {
        if ownsClient { try? await client.shutdown() }
    }

    /// `apns-push-type` and `apns-priority` from the payload: background (5) for a
    /// content-available-only `aps`, otherwise alert (10).
    static func pushType(of payload: JSONValue) -> (type: String, priority: Int) {
        guard case .object(let aps)? = ProviderErrorBody.member(payload, "aps") else { return ("alert", 10) }
        let keys = Set(aps.map(\.key))
        if keys.contains("content-available"), keys.isDisjoint(with: ["alert", "badge", "sound"]) { return ("background", 5) }
        return ("alert", 10)
    }

    public func send(_ n: MPNNotification) async -> MPNDeliveryResult {
        let body = n.payload.serialized
        let token: String
        do { token = try tokens.token() } catch {
            logger.critical("APNs provider token cannot be signed", metadata: ["error": "\(error)", "app": "\(applicationId)"])
            return .authenticationFailed(reason: "signing: \(error)")
        }
        // Only hex ever reaches the path (registration refuses other tokens; this catches any
        // stored before that check).
        guard MPNDeviceToken.isValidApple(n.deviceToken) else { return .deviceInvalid(reason: "BadDeviceToken (not hex)") }
        let (pushType, priority) = Self.pushType(of: n.payload)
        var request = HTTPClientRequest(url: configuration.baseURL + "/3/device/" + n.deviceToken)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer " + token)
        request.headers.add(name: "apns-topic", value: configuration.topic ?? applicationId)
        request.headers.add(name: "apns-push-type", value: pushType)
        request.headers.add(name: "apns-priority", value: String(priority))
        // One id per notification, the same on every resend of it (outbox entry id).
        request.headers.add(name: "apns-id", value: n.idempotencyKey.map(MPNNotificationId.uuid) ?? UUID().uuidString.lowercased())
        if let expiration = configuration.expiration {
            let offset = MPNProviderNumbers.seconds(expiration, in: MPNProviderNumbers.apnsExpirationSeconds)
            request.headers.add(name: "apns-expiration", value: String(Saturating.add(clock.nowSeconds, offset)))
        }
        if let collapse = n.collapseId ?? n.idempotencyKey, !collapse.isEmpty, collapse.utf8.count <= 64 {
            request.headers.add(name: "apns-collapse-id", value: collapse)
        }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        do {
            let timeout = MPNProviderNumbers.seconds(configuration.requestTimeout, in: MPNProviderNumbers.requestTimeoutSeconds)
            let response = try await client.execute(request, timeout: .seconds(timeout))
            let bytes = try await response.body.collect(upTo: 16 * 1024)
            metrics?.providerStatus(provider: "apns", app: applicationId, status: Int(response.status.code))
            return classify(
                status: Int(response.status.code), body: String(buffer: bytes),
                retryAfter: response.headers.first(name: "retry-after"))
        } catch {
            return .retry(after: nil, reason: "network: \(error)")
        }
    }

    func classify(status: Int, body: String, retryAfter: String?) -> MPNDeliveryResult {
        if status == 200 { return .delivered }
        let reason = ProviderErrorBody.string(ProviderErrorBody.member(ProviderErrorBody.json(body), "reason")) ?? "HTTP \(status)"
        let after = MPNProviderNumbers.retryAfter(retryAfter)
        switch (status, reason) {
        case (410, _), (_, "BadDeviceToken"), (_, "Unregistered"), (_, "DeviceTokenNotForTopic"), (_, "ExpiredToken"):
            return .deviceInvalid(reason: reason)
        case (403, "ExpiredProviderToken"):
            tokens.invalidate()
            return .retry(after: nil, reason: reason)
        case (403, _):
            logger.critical("APNs refused the provider credentials", metadata: ["reason": "\(reason)", "app": "\(applicationId)"])
            return .authenticationFailed(reason: reason)
        case (429, _), (500..., _):
            return .retry(after: after, reason: reason)
        default:
            return .rejected(reason: reason)
        }
    }
}
