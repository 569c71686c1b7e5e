import Crypto
import Foundation
import TLCP
import Testing

@testable import MPNModule

@Suite("APNs provider against a local HTTP/2 TLS server")
struct APNsProviderTests {
    /// The scripted case a (hex) device token names: `hex("ok")` is the token of case "ok".
    static func script(_ r: H2TestServer.Request) -> H2TestServer.Response {
        switch unhex(r.path.split(separator: "/").last.map(String.init) ?? "") {
        case "ok": return .init(status: 200, headers: [("apns-id", r.header("apns-id") ?? "")])
        case "gone": return .init(status: 410, body: #"{"reason":"Unregistered","timestamp":1700000000000}"#)
        case "bad": return .init(status: 400, body: #"{"reason":"BadDeviceToken"}"#)
        case "busy": return .init(status: 429, headers: [("retry-after", "7")], body: #"{"reason":"TooManyRequests"}"#)
        case "down": return .init(status: 500, body: #"{"reason":"InternalServerError"}"#)
        case "auth": return .init(status: 403, body: #"{"reason":"InvalidProviderToken"}"#)
        case "expired": return .init(status: 403, body: #"{"reason":"ExpiredProviderToken"}"#)
        case "big": return .init(status: 413, body: #"{"reason":"PayloadTooLarge"}"#)
        default: return .init(status: 404, body: #"{"reason":"BadPath"}"#)
        }
    }

    @Test("headers, ES256 provider token, payload and response mapping")
    func endToEnd() async throws {
        let key = P256.Signing.PrivateKey()
        let server = try await H2TestServer.start(script: Self.script)
        let client = testHTTPClient(trusting: server.certificate)
        try await withCleanup(client, server) {
            let clock = ManualWallClock(millis: 1_700_000_000_000)
            let provider = try APNsProvider(
                applicationId: "com.example.app",
                configuration: APNsConfiguration(
                    baseURL: server.baseURL, teamId: "TEAM123456", keyId: "KEY1234567",
                    privateKeyPEM: key.pemRepresentation),
                httpClient: client, clock: clock)

            let first = await provider.send(try note(hex("ok")))
            #expect(first == .delivered)
            let request = try #require(server.requests.last)
            #expect(request.version.major == 2, "APNs requires HTTP/2")
            #expect(request.method == "POST" && request.path == "/3/device/" + hex("ok"))
            #expect(request.header("apns-topic") == "com.example.app")
            #expect(request.header("apns-push-type") == "alert")
            #expect(request.header("apns-priority") == "10")
            #expect(request.header("apns-expiration") == String(1_700_000_000 + 86400))
            #expect(request.header("apns-collapse-id") == "c1")
            #expect(request.header("apns-id")?.count == 36)
            #expect(request.body == #"{"aps":{"alert":"hi"}}"#)
            let auth = try #require(request.header("authorization"))
            #expect(auth.hasPrefix("bearer "))
            let jwt = try #require(DecodedJWT(String(auth.dropFirst("bearer ".count))))
            #expect(jwt.string(jwt.header, "alg") == "ES256" && jwt.string(jwt.header, "kid") == "KEY1234567")
            #expect(jwt.string(jwt.claims, "iss") == "TEAM123456" && jwt.string(jwt.claims, "iat") == "1700000000")
            #expect(jwt.verifyES256(key.publicKey))
            #expect(!jwt.verifyES256(P256.Signing.PrivateKey().publicKey))

            #expect(await provider.send(try note(hex("gone"))) == .deviceInvalid(reason: "Unregistered"))
            #expect(await provider.send(try note(hex("bad"))) == .deviceInvalid(reason: "BadDeviceToken"))
            #expect(await provider.send(try note(hex("busy"))) == .retry(after: .seconds(7), reason: "TooManyRequests"))
            #expect(await provider.send(try note(hex("down"))) == .retry(after: nil, reason: "InternalServerError"))
            #expect(await provider.send(try note(hex("auth"))) == .authenticationFailed(reason: "InvalidProviderToken"))
            #expect(await provider.send(try note(hex("big"))) == .rejected(reason: "PayloadTooLarge"))
            // An expired provider token is rebuilt for the next request.
            let before = server.requests.last?.header("authorization")
            clock.advance(millis: 1000)
            #expect(await provider.send(try note(hex("expired"))) == .retry(after: nil, reason: "ExpiredProviderToken"))
            #expect(server.requests.last?.header("authorization") == before, "still the cached token")
            clock.advance(millis: 1000)
            _ = await provider.send(try note(hex("ok")))
            #expect(server.requests.last?.header("authorization") != before, "a new token after ExpiredProviderToken")

            // Background pushes: push type background, priority 5.
            _ = await provider.send(try note(hex("ok"), payload: #"{"aps":{"content-available":1},"k":"v"}"#))
            #expect(server.requests.last?.header("apns-push-type") == "background")
            #expect(server.requests.last?.header("apns-priority") == "5")
        }
    }

    @Test("provider token reused 20–60 minutes, then rebuilt")
    func tokenRefresh() throws {
        let clock = ManualWallClock(millis: 1_700_000_000_000)
        let pem = P256.Signing.PrivateKey().pemRepresentation
        let manager = try APNsTokenManager(configuration: APNsConfiguration(teamId: "T", keyId: "K", privateKeyPEM: pem), clock: clock)
        let first = try manager.token()
        clock.advance(millis: 19 * 60_000)
        #expect(try manager.token() == first)
        clock.advance(millis: 31 * 60_000)
        let second = try manager.token()
        #expect(second != first, "rebuilt after the 50-minute default")
        // An interval below Apple's 20 minutes is clamped up.
        let eager = try APNsTokenManager(
            configuration: APNsConfiguration(
                teamId: "T", keyId: "K", privateKeyPEM: pem,
                tokenRefreshInterval: .seconds(60)), clock: clock)
        let t = try eager.token()
        clock.advance(millis: 10 * 60_000)
        #expect(try eager.token() == t)
        clock.advance(millis: 10 * 60_000)
        #expect(try eager.token() != t)
    }

    @Test("a bad key is refused at configuration time")
    func badKey() {
        #expect(throws: (any Error).self) {
            try APNsProvider(applicationId: "a", configuration: APNsConfiguration(teamId: "T", keyId: "K", privateKeyPEM: "nope"))
        }
    }

    @Test("hostile Retry-After values are clamped or ignored, never trapping")
    func hostileRetryAfter() async throws {
        let server = try await H2TestServer.start { r in
            let value = unhex(r.path.split(separator: "/").last.map(String.init) ?? "")
            return .init(status: 429, headers: [("retry-after", value)], body: #"{"reason":"TooManyRequests"}"#)
        }
        let client = testHTTPClient(trusting: server.certificate)
        try await withCleanup(client, server) {
            let provider = try APNsProvider(
                applicationId: "com.example.app",
                configuration: APNsConfiguration(
                    baseURL: server.baseURL, teamId: "TEAM123456", keyId: "KEY1234567",
                    privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation,
                    expiration: .seconds(Int64.max), requestTimeout: .seconds(Int64.max)),
                httpClient: client)
            let cases: [(String, Duration?)] = [
                ("99999999999999999999", .seconds(86_400)), ("86401", .seconds(86_400)), ("30", .seconds(30)),
                ("-5", nil), ("1.5", nil), ("Wed, 21 Oct 2015 07:28:00 GMT", nil), ("1e300", nil), (" 12 ", .seconds(12)),
            ]
            for (value, expected) in cases {
                #expect(
                    await provider.send(try note(hex(value))) == .retry(after: expected, reason: "TooManyRequests"),
                    "Retry-After: \(value)")
            }
            // The configured expiration past any sane value is clamped (30 days).
            let expiration = try #require(server.requests.last?.header("apns-expiration").flatMap { Int64($0) })
            #expect(expiration <= Int64(Date().timeIntervalSince1970) + 30 * 86_400 + 60)
        }
    }

    @Test("apns-id and apns-collapse-id come from the idempotency key; a token that is not hex never reaches the path")
    func idsAndTokens() async throws {
        let server = try await H2TestServer.start(script: Self.script)
        let client = testHTTPClient(trusting: server.certificate)
        try await withCleanup(client, server) {
            let provider = try APNsProvider(
                applicationId: "com.example.app",
                configuration: APNsConfiguration(
                    baseURL: server.baseURL, teamId: "TEAM123456", keyId: "KEY1234567",
                    privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation),
                httpClient: client)
            let key = "5d1e6c4a-3b2f-4c1d-9e8f-0a1b2c3d4e5f"
            var n = try note(hex("ok"))
            n.collapseId = nil
            n.idempotencyKey = key
            #expect(await provider.send(n) == .delivered)
            #expect(await provider.send(n) == .delivered)
            let ids = server.requests.map { $0.header("apns-id") }
            #expect(ids == [key, key], "the same apns-id on a resend")
            #expect(server.requests.last?.header("apns-collapse-id") == key)
            // A key that is not a UUID gives a UUID, always the same one.
            n.idempotencyKey = "entry-7"
            _ = await provider.send(n)
            _ = await provider.send(n)
            let derived = server.requests.suffix(2).map { $0.header("apns-id") ?? "" }
            #expect(derived[0] == derived[1] && UUID(uuidString: derived[0]) != nil && derived[0] == derived[0].lowercased())
            // Tokens that are not hex are refused before any request.
            let before = server.requests.count
            for bad in ["../../x", "0a/../b", "0a?x=1", "0a1", "", String(repeating: "0", count: 202), "zz"] {
                #expect(await provider.send(try note(bad)) == .deviceInvalid(reason: "BadDeviceToken (not hex)"))
            }
            #expect(server.requests.count == before)
        }
    }
}

/// Hex of a text's UTF-8 bytes (test device tokens that name a scripted case).
func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }

/// The text `hex` encoded (empty when not hex).
func unhex(_ text: String) -> String {
    var bytes: [UInt8] = []
    var i = text.startIndex
    while i < text.endIndex, let j = text.index(i, offsetBy: 2, limitedBy: text.endIndex) {
        guard let b = UInt8(text[i..<j], radix: 16) else { return "" }
        bytes.append(b)
        i = j
    }
    return String(decoding: bytes, as: UTF8.self)
}
