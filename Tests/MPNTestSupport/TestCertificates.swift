import Crypto
import Foundation
import X509

/// Throw-away certificates for TLS tests: a CA, and a `localhost` leaf signed by it (BoringSSL
/// will not take a self-signed leaf as its own root).
public struct TestCertificateAuthority: Sendable {
    public let certificate: Certificate
    let key: Data
    let name: DistinguishedName

    /// A leaf certificate and its key.
    public struct Leaf: Sendable {
        public let certificate: Certificate
        /// The private key, PEM and DER.
        public let keyPEM: String
        public let keyDER: Data
        public var pem: String { (try? certificate.serializeAsPEM().pemString) ?? "" }
    }

    public var pem: String { (try? certificate.serializeAsPEM().pemString) ?? "" }

    public init(name: String) throws {
        let key = P256.Signing.PrivateKey()
        let dn = try DistinguishedName { CommonName(name) }
        let now = Date()
        certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(3600),
            issuer: dn, subject: dn, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(key))
        self.key = key.rawRepresentation
        self.name = dn
    }

    /// A server certificate for `host` (DNS name), valid for an hour either side of now.
    public func issueServerCertificate(host: String = "localhost") throws -> Leaf {
        let key = P256.Signing.PrivateKey()
        let now = Date()
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(3600),
            issuer: name, subject: try DistinguishedName { CommonName(host) }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName(host)])
            },
            issuerPrivateKey: .init(try P256.Signing.PrivateKey(rawRepresentation: self.key)))
        return Leaf(certificate: leaf, keyPEM: key.pemRepresentation, keyDER: key.derRepresentation)
    }
}
