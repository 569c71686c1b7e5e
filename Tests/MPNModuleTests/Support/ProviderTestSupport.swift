import AsyncHTTPClient
import Crypto
import Foundation
@_exported import MPNTestSupport
import NIOSSL
import TLCP

@testable import MPNModule

/// Splits a compact JWS and decodes its header and claims.
struct DecodedJWT {
    var header: JSONValue
    var claims: JSONValue
    var signingInput: String
    var signature: Data

    init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let h = JWT.base64URLDecode(parts[0]), let c = JWT.base64URLDecode(parts[1]),
            let s = JWT.base64URLDecode(parts[2]),
            let header = try? JSONValue.parse(String(decoding: h, as: UTF8.self)),
            let claims = try? JSONValue.parse(String(decoding: c, as: UTF8.self))
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = parts[0] + "." + parts[1]
        self.signature = s
    }

    func string(_ v: JSONValue, _ key: String) -> String? {
        guard case .object(let m) = v, let value = m.first(where: { $0.key == key })?.value else { return nil }
        switch value {
        case .string(let s): return s
        case .number(let n): return n
        default: return nil
        }
    }

    func verifyES256(_ key: P256.Signing.PublicKey) -> Bool {
        guard let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(sig, for: Data(signingInput.utf8))
    }
}

func member(_ v: JSONValue?, _ key: String) -> JSONValue? {
    guard case .object(let m)? = v else { return nil }
    return m.first { $0.key == key }?.value
}

func note(_ token: String, platform: MPNPlatform = .apple, payload: String = #"{"aps":{"alert":"hi"}}"#) throws -> MPNNotification {
    MPNNotification(
        platform: platform, applicationId: "com.example.app", deviceToken: token, deviceId: "dev-1",
        subscriptionId: "sub-1", payload: try JSONValue.parse(payload), collapseId: "c1")
}

/// Runs `body`, then shuts the client and the server down whatever happened (a client
/// deinitialized unshut traps; no blocking wait, which could starve the 2-thread pool).
func withCleanup(_ client: HTTPClient, _ server: H2TestServer, _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        try? await client.shutdown()
        await server.shutdown()
        throw error
    }
    try? await client.shutdown()
    await server.shutdown()
}
