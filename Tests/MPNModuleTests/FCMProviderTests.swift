import Crypto
import Foundation
import NIOConcurrencyHelpers
import TLCP
import Testing
import _CryptoExtras

@testable import MPNModule

@Suite("FCM provider against a local HTTP/2 TLS server")
struct FCMProviderTests {
    /// A test-only service account: the key is generated here and never leaves the test.
    static func account(tokenURI: String) throws -> (FCMServiceAccount, _RSA.Signing.PublicKey) {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let json = """
            {"type":"service_account","project_id":"test-project","private_key_id":"kid-1",
             "private_key":\(JSONValue.string(key.pkcs8PEMRepresentation).serialized),
             "client_email":"pusher@test-project.iam.gserviceaccount.com","token_uri":"\(tokenURI)"}
            """
        return (try FCMServiceAccount.parse(Data(json.utf8)), key.publicKey)
    }

    @Test("OAuth2 assertion, access token cache, message and response mapping")
    func endToEnd() async throws {
        let publicKey = NIOLockedValueBox<_RSA.Signing.PublicKey?>(nil)
        let tokenRequests = NIOLockedValueBox(0)
        let server = try await H2TestServer.start { r in
            if r.path == "/token" {
                tokenRequests.withLockedValue { $0 += 1 }
                var form: [String: String] = [:]
                for pair in r.body.split(separator: "&") {
                    let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                    if kv.count == 2 { form[kv[0]] = kv[1] }
                }
                guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer",
                    let jwt = form["assertion"].flatMap(DecodedJWT.init), let pk = publicKey.withLockedValue({ $0 }),
                    let sig = Optional(_RSA.Signing.RSASignature(rawRepresentation: jwt.signature)),
                    pk.isValidSignature(sig, for: Data(jwt.signingInput.utf8), padding: .insecurePKCS1v1_5),
                    jwt.string(jwt.header, "alg") == "RS256",
                    jwt.string(jwt.claims, "iss") == "pusher@test-project.iam.gserviceaccount.com",
                    jwt.string(jwt.claims, "scope") == "https://www.googleapis.com/auth/firebase.messaging",
                    jwt.string(jwt.claims, "aud")?.hasSuffix("/token") == true,
                    let iat = jwt.string(jwt.claims, "iat").flatMap(Int64.init),
                    let exp = jwt.string(jwt.claims, "exp").flatMap(Int64.init), exp - iat <= 3600
                else { return .init(status: 400, body: #"{"error":"invalid_grant"}"#) }
                return .init(status: 200, body: #"{"access_token":"access-\#(iat)","expires_in":3600,"token_type":"Bearer"}"#)
            }
            guard r.path == "/v1/projects/test-project/messages:send", r.header("authorization")?.hasPrefix("Bearer access-") == true,
                let body = try? JSONValue.parse(r.body),
                case .string(let token)? = member(member(body, "message"), "token")
            else {
                return .init(status: 401, body: #"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#)
            }
            func fcmError(_ status: Int, _ code: String, _ grpc: String) -> H2TestServer.Response {
                .init(
                    status: status,
                    body:
                        #"{"error":{"code":\#(status),"status":"\#(grpc)","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(code)"}]}}"#
                )
            }
            switch token {
            case "ok": return .init(status: 200, body: #"{"name":"projects/test-project/messages/1"}"#)
            case "gone": return fcmError(404, "UNREGISTERED", "NOT_FOUND")
            case "quota": return fcmError(429, "QUOTA_EXCEEDED", "RESOURCE_EXHAUSTED")
            case "down":
                return .init(status: 503, headers: [("retry-after", "120")], body: #"{"error":{"code":503,"status":"UNAVAILABLE"}}"#)
            case "auth": return fcmError(403, "SENDER_ID_MISMATCH", "PERMISSION_DENIED")
            case "denied": return .init(status: 403, body: #"{"error":{"code":403,"status":"PERMISSION_DENIED"}}"#)
            case "badarg": return fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")
            default: return .init(status: 500, body: "{}")
            }
        }
        let (account, pk) = try Self.account(tokenURI: server.baseURL + "/token")
        publicKey.withLockedValue { $0 = pk }
        let client = testHTTPClient(trusting: server.certificate)
        try await withCleanup(client, server) {
            let clock = ManualWallClock(millis: 1_700_000_000_000)
            let provider = try FCMProvider(
                configuration: FCMConfiguration(serviceAccount: account, baseURL: server.baseURL),
                httpClient: client, clock: clock)
            let payload = #"{"android":{"notification":{"body":"Price $[2]"}},"collapse_key":"q","priority":"high"}"#
            #expect(await provider.send(try note("ok", platform: .google, payload: payload)) == .delivered)
            let sent = try #require(server.requests.last)
            #expect(sent.version.major == 2)
            #expect(
                sent.body
                    == #"{"message":{"android":{"notification":{"body":"Price $[2]"},"collapse_key":"q","priority":"HIGH"},"token":"ok"}}"#)
            #expect(await provider.send(try note("gone", platform: .google)) == .deviceInvalid(reason: "UNREGISTERED"))
            #expect(await provider.send(try note("quota", platform: .google)) == .retry(after: .seconds(60), reason: "QUOTA_EXCEEDED"))
            #expect(await provider.send(try note("down", platform: .google)) == .retry(after: .seconds(120), reason: "UNAVAILABLE"))
            #expect(await provider.send(try note("auth", platform: .google)) == .deviceInvalid(reason: "SENDER_ID_MISMATCH"))
            #expect(await provider.send(try note("denied", platform: .google)) == .authenticationFailed(reason: "PERMISSION_DENIED"))
            #expect(await provider.send(try note("badarg", platform: .google)) == .rejected(reason: "INVALID_ARGUMENT"))
            #expect(tokenRequests.withLockedValue { $0 } == 1, "the access token is cached")
            clock.advance(millis: 3_550_000)
            _ = await provider.send(try note("ok", platform: .google))
            #expect(tokenRequests.withLockedValue { $0 } == 2, "refreshed a minute before expiry")
        }
    }

    @Test("a refused assertion is an authentication alarm")
    func refusedToken() async throws {
        let server = try await H2TestServer.start { _ in .init(status: 400, body: #"{"error":"invalid_grant"}"#) }
        let (account, _) = try Self.account(tokenURI: server.baseURL + "/token")
        let client = testHTTPClient(trusting: server.certificate)
        try await withCleanup(client, server) {
            let provider = try FCMProvider(
                configuration: FCMConfiguration(serviceAccount: account, baseURL: server.baseURL),
                httpClient: client)
            #expect(await provider.send(try note("ok", platform: .google)) == .authenticationFailed(reason: "token endpoint HTTP 400"))
        }
    }
}

@Suite("Log provider")
struct LogProviderTests {
    @Test("one JSON line per notification")
    func lines() async throws {
        let lines = NIOLockedValueBox<[String]>([])
        let provider = LogProvider(
            destination: .callback { l in lines.withLockedValue { $0.append(l) } },
            clock: ManualWallClock(millis: 5))
        #expect(await provider.send(try note("tok")) == .delivered)
        let line = try #require(lines.withLockedValue { $0.first })
        #expect(
            line
                == #"{"time":5,"platform":"Apple","appId":"com.example.app","deviceToken":"tok","deviceId":"dev-1","subscriptionId":"sub-1","triggered":false,"payload":{"aps":{"alert":"hi"}}}"#
        )
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mpn-log-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = LogProvider(destination: .file(path: path))
        _ = await file.send(try note("a"))
        _ = await file.send(try note("b"))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.split(separator: "\n").count == 2)
    }
}
