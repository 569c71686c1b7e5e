import Crypto
import Foundation
import Testing
import TLCP
@testable import MPNModule

@Suite("APNs provider against a local HTTP/2 TLS server")
struct APNsProviderTests {
    static func script(_ r: H2TestServer.Request) -> H2TestServer.Response {
        switch r.path.split(separator: "/").last.map(String.init) ?? "" {
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
                configuration: APNsConfiguration(baseURL: server.baseURL, teamId: "TEAM123456", keyId: "KEY1234567",
                                                 privateKeyPEM: key.pemRepresentation),
                httpClient: client, clock: clock)

            let first = await provider.send(try note("ok"))
            #expect(first == .delivered)
            let request = try #require(server.requests.last)
            #expect(request.version.major == 2, "APNs requires HTTP/2")
            #expect(request.method == "POST" && request.path == "/3/device/ok")
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

            #expect(await provider.send(try note("gone")) == .deviceInvalid(reason: "Unregistered"))
            #expect(await provider.send(try note("bad")) == .deviceInvalid(reason: "BadDeviceToken"))
            #expect(await provider.send(try note("busy")) == .retry(after: .seconds(7), reason: "TooManyRequests"))
            #expect(await provider.send(try note("down")) == .retry(after: nil, reason: "InternalServerError"))
            #expect(await provider.send(try note("auth")) == .authenticationFailed(reason: "InvalidProviderToken"))
            #expect(await provider.send(try note("big")) == .rejected(reason: "PayloadTooLarge"))
            // An expired provider token is rebuilt for the next request.
            let before = server.requests.last?.header("authorization")
            clock.advance(millis: 1000)
            #expect(await provider.send(try note("expired")) == .retry(after: nil, reason: "ExpiredProviderToken"))
            #expect(server.requests.last?.header("authorization") == before, "still the cached token")
            clock.advance(millis: 1000)
            _ = await provider.send(try note("ok"))
            #expect(server.requests.last?.header("authorization") != before, "a new token after ExpiredProviderToken")

            // Background pushes: push type background, priority 5.
            _ = await provider.send(try note("ok", payload: #"{"aps":{"content-available":1},"k":"v"}"#))
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
        let eager = try APNsTokenManager(configuration: APNsConfiguration(teamId: "T", keyId: "K", privateKeyPEM: pem,
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
}
