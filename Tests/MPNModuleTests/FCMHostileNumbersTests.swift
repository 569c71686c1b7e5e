import Foundation
import NIOConcurrencyHelpers
import TLCP
import Testing
import _CryptoExtras

@testable import MPNModule

/// Numbers in FCM and OAuth2 answers chosen to break time arithmetic: each is parsed and
/// clamped into its documented range (docs/RELIABILITY.md, "MPN Module").
@Suite("FCM provider: hostile numbers and collapse keys")
struct FCMHostileNumbersTests {
    /// A server whose token endpoint answers `expires_in` with `expiresIn` (raw JSON) and whose
    /// send endpoint answers 503 with `Retry-After: <the token>`, or 200 for token `ok`.
    static func server(expiresIn: NIOLockedValueBox<String>, tokenRequests: NIOLockedValueBox<Int>) async throws -> H2TestServer {
        try await H2TestServer.start { r in
            if r.path == "/token" {
                tokenRequests.withLockedValue { $0 += 1 }
                let e = expiresIn.withLockedValue { $0 }
                return .init(status: 200, body: #"{"access_token":"access-1","expires_in":\#(e),"token_type":"Bearer"}"#)
            }
            guard let body = try? JSONValue.parse(r.body), case .string(let token)? = member(member(body, "message"), "token") else {
                return .init(status: 400, body: "{}")
            }
            if token == "ok" { return .init(status: 200, body: #"{"name":"n"}"#) }
            return .init(status: 503, headers: [("retry-after", token)], body: #"{"error":{"code":503,"status":"UNAVAILABLE"}}"#)
        }
    }

    @Test("expires_in of 1e300, -1e300, huge integers, strings or garbage: the cache lifetime stays within 0...1 day")
    func expiresIn() async throws {
        let expiresIn = NIOLockedValueBox("1e300")
        let tokenRequests = NIOLockedValueBox(0)
        let server = try await Self.server(expiresIn: expiresIn, tokenRequests: tokenRequests)
        let (account, _) = try FCMProviderTests.account(tokenURI: server.baseURL + "/token")
        let client = testHTTPClient(trusting: server.certificate)
        try await withCleanup(client, server) {
            let clock = ManualWallClock(millis: 1_700_000_000_000)
            func provider() throws -> FCMProvider {
                try FCMProvider(
                    configuration: FCMConfiguration(
                        serviceAccount: account, baseURL: server.baseURL,
                        requestTimeout: .seconds(Int64.max)),
                    httpClient: client, clock: clock)
            }
            // 1e300 → one day: cached, then refreshed once the day (less a minute) is over.
            let p1 = try provider()
            #expect(await p1.send(try note("ok", platform: .google)) == .delivered)
            clock.advance(millis: 86_000_000)
            #expect(await p1.send(try note("ok", platform: .google)) == .delivered)
            #expect(tokenRequests.withLockedValue { $0 } == 1)
            clock.advance(millis: 400_000)
            #expect(await p1.send(try note("ok", platform: .google)) == .delivered)
            #expect(tokenRequests.withLockedValue { $0 } == 2, "a lifetime of 1e300 s is one day")
            // Negative, huge and non-numbers: never a trap; negative is 0 (fetched each time).
            for (value, refetchEachTime) in [
                ("-1e300", true), ("-5", true), ("99999999999999999999999", false),
                ("\"abc\"", false), ("\"120\"", false), ("null", false), ("1.5e2", false),
            ] {
                expiresIn.withLockedValue { $0 = value }
                let p = try provider()
                let before = tokenRequests.withLockedValue { $0 }
                #expect(await p.send(try note("ok", platform: .google)) == .delivered, "expires_in \(value)")
                #expect(await p.send(try note("ok", platform: .google)) == .delivered, "expires_in \(value)")
                #expect(tokenRequests.withLockedValue { $0 } - before == (refetchEachTime ? 2 : 1), "expires_in \(value)")
            }
        }
    }

    @Test("Retry-After from FCM: clamped to one day, dates and negatives ignored")
    func retryAfter() async throws {
        let server = try await Self.server(expiresIn: NIOLockedValueBox("3600"), tokenRequests: NIOLockedValueBox(0))
        let (account, _) = try FCMProviderTests.account(tokenURI: server.baseURL + "/token")
        let client = testHTTPClient(trusting: server.certificate)
        try await withCleanup(client, server) {
            let provider = try FCMProvider(
                configuration: FCMConfiguration(serviceAccount: account, baseURL: server.baseURL),
                httpClient: client)
            let cases: [(String, Duration?)] = [
                ("99999999999999999999", .seconds(86_400)), ("-1", nil),
                ("Wed, 21 Oct 2015 07:28:00 GMT", nil), ("45", .seconds(45)),
            ]
            for (value, expected) in cases {
                #expect(
                    await provider.send(try note(value, platform: .google)) == .retry(after: expected, reason: "UNAVAILABLE"),
                    "Retry-After: \(value)")
            }
        }
    }

    @Test("the idempotency key becomes android.collapse_key and the APNs collapse header, unless the format sets them")
    func collapseKeys() {
        let payload = try? JSONValue.parse(#"{"android":{"notification":{"body":"b"}}}"#)
        let m = FCMProvider.message(payload: payload ?? .null, token: "t", collapseKey: "k-1")
        #expect(
            m.serialized
                == #"{"apns":{"headers":{"apns-collapse-id":"k-1"}},"android":{"notification":{"body":"b"},"collapse_key":"k-1"},"token":"t"}"#
        )
        let own = try? JSONValue.parse(#"{"collapse_key":"mine","apns":{"headers":{"apns-collapse-id":"x"}}}"#)
        let kept = FCMProvider.message(payload: own ?? .null, token: "t", collapseKey: "k-1")
        #expect(kept.serialized == #"{"apns":{"headers":{"apns-collapse-id":"x"}},"android":{"collapse_key":"mine"},"token":"t"}"#)
    }
}
