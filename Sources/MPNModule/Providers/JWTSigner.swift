import Crypto
import Foundation
import TLCP
import _CryptoExtras

/// Compact JWS (RFC 7515) for the two provider credentials: ES256 (APNs .p8 keys) and RS256
/// (Google service accounts). Header and claims are serialized in the given member order.
enum JWT {
    static func base64URL<D: DataProtocol>(_ bytes: D) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64URLDecode(_ text: some StringProtocol) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s)
    }

    static func signingInput(header: [JSONMember], claims: [JSONMember]) -> String {
        base64URL(Array(JSONValue.object(header).serialized.utf8)) + "." + base64URL(Array(JSONValue.object(claims).serialized.utf8))
    }

    /// ES256: ECDSA P-256 with SHA-256, signature as raw r‖s (64 bytes).
    static func es256(header: [JSONMember], claims: [JSONMember], key: P256.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// RS256: RSASSA-PKCS1-v1_5 with SHA-256.
    static func rs256(header: [JSONMember], claims: [JSONMember], key: _RSA.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }
}
