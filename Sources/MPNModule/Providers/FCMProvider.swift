import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import TLCP
import _CryptoExtras

/// The fields of a Google service-account JSON file the FCM provider needs.
public struct FCMServiceAccount: Sendable, Codable, Hashable {
    public var projectId: String
    public var privateKeyId: String?
    /// PKCS#8 PEM of the RSA key.
    public var privateKey: String
    public var clientEmail: String
    public var tokenURI: String

    enum CodingKeys: String, CodingKey {
        case projectId = "project_id"
        case privateKeyId = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    public init(
        projectId: String, privateKeyId: String?, privateKey: String, clientEmail: String,
        tokenURI: String = "https://oauth2.googleapis.com/token"
    ) {
        self.projectId = projectId
        self.privateKeyId = privateKeyId
        self.privateKey = privateKey
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
    }

    /// Reads a service-account JSON file's contents.
    public static func parse(_ data: Data) throws -> FCMServiceAccount {
        try JSONDecoder().decode(FCMServiceAccount.self, from: data)
    }
}

public struct FCMConfiguration: Sendable {
    public static let productionURL = "https://fcm.googleapis.com"
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    public var serviceAccount: FCMServiceAccount
    /// `productionURL` or a test server.
    public var baseURL: String
    /// `dry_run` service level: FCM validates without delivering.
    public var validateOnly: Bool
    public var requestTimeout: Duration

    public init(
        serviceAccount: FCMServiceAccount, baseURL: String = FCMConfiguration.productionURL,
        validateOnly: Bool = false, requestTimeout: Duration = .seconds(30)
    ) {
        self.serviceAccount = serviceAccount
        self.baseURL = baseURL
        self.validateOnly = validateOnly
        self.requestTimeout = requestTimeout
    }
}

/// FCM HTTP v1: OAuth2 access token from an RS256 JWT assertion (cached until a minute before
/// it expires), then `POST /v1/projects/{id}/messages:send`.
public final class FCMProvider: MPNProvider {
    public let configuration: FCMConfiguration
    /// Checked at init; the key type is not Sendable, so it is parsed again for each assertion (hourly).
    private let keyPEM: String
    private let client: HTTPClient
    private let ownsClient: Bool
    private let clock: any MPNWallClock
    private let logger: Logger
    /// HTTP status codes answered (`lightstreamer_mpn_provider_responses_total`).
    private let metrics: MPNMetrics?
    private let cached = NIOLockedValueBox<(token: String, expiresAt: Int64)?>(nil)

    public init(
        configuration: FCMConfiguration, httpClient: HTTPClient? = nil, clock: any MPNWallClock = SystemWallClock(),
        logger: Logger = Logger(label: "lightstreamer.mpn.google"), metrics: MPNMetrics? = nil
    ) throws {
        self.configuration = configuration
        self.metrics = metrics
        _ = try _RSA.Signing.PrivateKey(pemRepresentation: configuration.serviceAccount.privateKey)
        self.keyPEM = configuration.serviceAccount.privateKey
        self.client = httpClient ?? HTTPClient(eventLoopGroupProvider: .singleton)
        self.ownsClient = httpClient == nil
        self.clock = clock
        self.logger = logger
    }

    public func shutdown() async {
        if ownsClient { try? await client.shutdown() }
    }

    private var timeout: TimeAmount {
        .seconds(MPNProviderNumbers.seconds(configuration.requestTimeout, in: MPNProviderNumbers.requestTimeoutSeconds))
    }

    /// The JWT assertion for the token endpoint.
    func assertion(now: Int64) throws -> String {
        let account = configuration.serviceAccount
        var header = [JSONMember(key: "alg", value: .string("RS256")), JSONMember(key: "typ", value: .string("JWT"))]
        if let kid = account.privateKeyId { header.append(JSONMember(key: "kid", value: .string(kid))) }
        return try JWT.rs256(
            header: header,
            claims: [
                JSONMember(key: "iss", value: .string(account.clientEmail)),
                JSONMember(key: "scope", value: .string(FCMConfiguration.scope)),
                JSONMember(key: "aud", value: .string(account.tokenURI)),
                JSONMember(key: "iat", value: .number(String(now))),
                JSONMember(key: "exp", value: .number(String(Saturating.add(now, 3600)))),
            ], key: _RSA.Signing.PrivateKey(pemRepresentation: keyPEM))
    }

    enum TokenError: Error { case refused(Int, String), malformed(String) }

    /// A valid access token, fetched when missing or within a minute of expiry.
    func accessToken() async throws -> String {
        let now = clock.nowSeconds
        if let c = cached.withLockedValue({ $0 }), now < Saturating.subtract(c.expiresAt, 60) { return c.token }
        var request = HTTPClientRequest(url: configuration.serviceAccount.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        let grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body =
            "grant_type=" + (grant.addingPercentEncoding(withAllowedCharacters: allowed) ?? grant)
            + "&assertion=" + (try assertion(now: now))
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: timeout)
        let text = String(buffer: try await response.body.collect(upTo: 64 * 1024))
        metrics?.providerStatus(provider: "fcm_token", app: configuration.serviceAccount.projectId, status: Int(response.status.code))
        guard response.status.code == 200 else { throw TokenError.refused(Int(response.status.code), text) }
        let json = ProviderErrorBody.json(text)
        guard let token = ProviderErrorBody.string(ProviderErrorBody.member(json, "access_token")) else {
            throw TokenError.malformed(text)
        }
        let lifetime = MPNProviderNumbers.expiresIn(ProviderErrorBody.member(json, "expires_in"))
        cached.withLockedValue { $0 = (token, Saturating.add(now, lifetime)) }
        return token
    }

    /// The v1 message: the format with the target token added. Accepts a format wrapped in
    /// `{"message": ...}` and the legacy flat keys (`collapse_key`, `priority`, `time_to_live`),
    /// moved under `android`.
    static func message(payload: JSONValue, token: String, collapseKey: String? = nil) -> JSONValue {
        var members: [JSONMember] = []
        if case .object(let m) = payload { members = m }
        if let inner = members.first(where: { $0.key == "message" }), case .object(let m) = inner.value { members = m }
        var android: [JSONMember] = []
        if let i = members.firstIndex(where: { $0.key == "android" }), case .object(let a) = members[i].value {
            android = a
            members.remove(at: i)
        }
        for legacy in ["collapse_key", "priority", "time_to_live"] {
            guard let i = members.firstIndex(where: { $0.key == legacy }) else { continue }
            let value = members.remove(at: i).value
            switch (legacy, value) {
            case ("priority", .string(let p)): android.append(JSONMember(key: "priority", value: .string(p.uppercased())))
            case ("time_to_live", .number(let n)): android.append(JSONMember(key: "ttl", value: .string(n + "s")))
            case ("collapse_key", _): android.append(JSONMember(key: "collapse_key", value: value))
            default: break
            }
        }
        members.removeAll { $0.key == "token" || $0.key == "topic" || $0.key == "condition" }
        if let key = collapseKey {
            // The same key on every send of one notification: a resend replaces, rather than
            // adds to, a copy still stored for the device (format's own keys win).
            if !android.contains(where: { $0.key == "collapse_key" }) {
                android.append(JSONMember(key: "collapse_key", value: .string(key)))
            }
            members = withAPNsCollapseId(members, key)
        }
        if !android.isEmpty { members.append(JSONMember(key: "android", value: .object(android))) }
        members.append(JSONMember(key: "token", value: .string(token)))
        return .object(members)
    }

    /// Adds `apns.headers["apns-collapse-id"]` unless the format sets it.
    private static func withAPNsCollapseId(_ members: [JSONMember], _ key: String) -> [JSONMember] {
        var members = members
        var apns: [JSONMember] = []
        if let i = members.firstIndex(where: { $0.key == "apns" }) {
            guard case .object(let a) = members[i].value else { return members }
            apns = a
            members.remove(at: i)
        }
        var headers: [JSONMember] = []
        if let i = apns.firstIndex(where: { $0.key == "headers" }) {
            guard case .object(let h) = apns[i].value else {
                members.append(JSONMember(key: "apns", value: .object(apns)))
                return members
            }
            headers = h
            apns.remove(at: i)
        }
        if !headers.contains(where: { $0.key.lowercased() == "apns-collapse-id" }) {
            headers.append(JSONMember(key: "apns-collapse-id", value: .string(key)))
        }
        apns.append(JSONMember(key: "headers", value: .object(headers)))
        members.append(JSONMember(key: "apns", value: .object(apns)))
        return members
    }

    public func send(_ n: MPNNotification) async -> MPNDeliveryResult {
        let access: String
        do { access = try await accessToken() } catch TokenError.refused(let status, let body) {
            if status >= 500 || status == 429 { return .retry(after: nil, reason: "token endpoint HTTP \(status)") }
            logger.critical(
                "OAuth2 token refused for the FCM service account",
                metadata: ["status": "\(status)", "body": "\(body.prefix(200))"])
            return .authenticationFailed(reason: "token endpoint HTTP \(status)")
        } catch {
            return .retry(after: nil, reason: "token endpoint: \(error)")
        }
        var body: [JSONMember] = []
        if configuration.validateOnly { body.append(JSONMember(key: "validate_only", value: .bool(true))) }
        body.append(
            JSONMember(key: "message", value: Self.message(payload: n.payload, token: n.deviceToken, collapseKey: n.idempotencyKey)))
        let project = configuration.serviceAccount.projectId
        var request = HTTPClientRequest(url: configuration.baseURL + "/v1/projects/\(project)/messages:send")
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer " + access)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: JSONValue.object(body).serialized))
        do {
            let response = try await client.execute(request, timeout: timeout)
            let text = String(buffer: try await response.body.collect(upTo: 64 * 1024))
            metrics?.providerStatus(provider: "fcm", app: n.applicationId, status: Int(response.status.code))
            return classify(status: Int(response.status.code), body: text, retryAfter: response.headers.first(name: "retry-after"))
        } catch {
            return .retry(after: nil, reason: "network: \(error)")
        }
    }

    func classify(status: Int, body: String, retryAfter: String?) -> MPNDeliveryResult {
        if status == 200 { return .delivered }
        let error = ProviderErrorBody.member(ProviderErrorBody.json(body), "error")
        var code = ProviderErrorBody.string(ProviderErrorBody.member(error, "status")) ?? "HTTP \(status)"
        if case .array(let details)? = ProviderErrorBody.member(error, "details") {
            for d in details {
                if let c = ProviderErrorBody.string(ProviderErrorBody.member(d, "errorCode")) { code = c }
            }
        }
        let after = MPNProviderNumbers.retryAfter(retryAfter)
        switch (status, code) {
        case (404, _), (_, "UNREGISTERED"), (_, "SENDER_ID_MISMATCH"):
            return .deviceInvalid(reason: code)
        case (401, "THIRD_PARTY_AUTH_ERROR"), (403, _):
            logger.critical(
                "FCM refused the credentials", metadata: ["code": "\(code)", "project": "\(configuration.serviceAccount.projectId)"])
            return .authenticationFailed(reason: code)
        case (401, _):
            // Our access token was refused: fetch a new one next time.
            cached.withLockedValue { $0 = nil }
            return .retry(after: nil, reason: code)
        case (429, _):
            // FCM asks for at least one minute before retrying after a quota error.
            return .retry(after: max(after ?? .seconds(60), .seconds(60)), reason: code)
        case (500..., _):
            return .retry(after: after, reason: code)
        default:
            return .rejected(reason: code)
        }
    }
}
