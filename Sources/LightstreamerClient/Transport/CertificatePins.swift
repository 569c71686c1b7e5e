import Foundation
import NIOSSL

#if canImport(Security)
import Security
#else
/// A public key to pin (`ConnectionDetails.certificatePins`). Where the Security framework
/// exists this is its `SecKey`; elsewhere (Linux) this stand-in holds the key as a DER
/// SubjectPublicKeyInfo, the form a certificate carries it in.
public final class SecKey: CustomStringConvertible, Sendable {
    /// The key as a DER SubjectPublicKeyInfo.
    public let subjectPublicKeyInfo: [UInt8]

    /// A key from its DER SubjectPublicKeyInfo. Throws when the bytes are not one.
    public init(subjectPublicKeyInfoDER der: [UInt8]) throws {
        guard SubjectPublicKeyInfo.publicKeyBits(der) != nil else { throw CertificatePinError.notASubjectPublicKeyInfo }
        subjectPublicKeyInfo = der
    }

    /// The public key of a certificate given in PEM (the first one, when several).
    public convenience init(certificatePEM pem: String) throws {
        let certificate = try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)
        try self.init(subjectPublicKeyInfoDER: try certificate.extractPublicKey().toSPKIBytes())
    }

    /// The public key of a certificate given in DER.
    public convenience init(certificateDER der: [UInt8]) throws {
        let certificate = try NIOSSLCertificate(bytes: der, format: .der)
        try self.init(subjectPublicKeyInfoDER: try certificate.extractPublicKey().toSPKIBytes())
    }

    /// `SecKey(<n> bytes SPKI)`: the size of the pinned key, not the key itself.
    public var description: String { "SecKey(\(subjectPublicKeyInfo.count) bytes SPKI)" }
}
#endif

/// Errors of the portable `SecKey`.
public enum CertificatePinError: Error, Sendable {
    /// The bytes are not a DER SubjectPublicKeyInfo.
    case notASubjectPublicKeyInfo
}

/// Pins in a comparable form: the subjectPublicKey bits of each key (what Security's external
/// representation of a key is for RSA and EC keys), or the whole SPKI where we hold it.
struct CertificatePins: Sendable, Hashable {
    enum Pin: Sendable, Hashable {
        case spki([UInt8])
        case keyBits([UInt8])
    }

    var pins: [Pin]

    init(_ keys: [SecKey]) {
        pins = keys.compactMap(Self.pin)
    }

    var isEmpty: Bool { pins.isEmpty }

    static func pin(_ key: SecKey) -> Pin? {
        #if canImport(Security)
        var error: Unmanaged<CFError>?
        guard let data = SecKeyCopyExternalRepresentation(key, &error) as Data? else { return nil }
        return .keyBits([UInt8](data))
        #else
        return .spki(key.subjectPublicKeyInfo)
        #endif
    }

    /// Whether the leaf certificate's key is one of the pins.
    func matches(leaf: NIOSSLCertificate) -> Bool {
        guard let spki = try? leaf.extractPublicKey().toSPKIBytes() else { return false }
        let bits = SubjectPublicKeyInfo.publicKeyBits(spki)
        return pins.contains {
            switch $0 {
            case .spki(let p): return p == spki
            case .keyBits(let p): return bits.map { $0 == p } ?? false
            }
        }
    }
}

/// Just enough DER to read a SubjectPublicKeyInfo:
/// `SEQUENCE { SEQUENCE algorithm, BIT STRING subjectPublicKey }`.
enum SubjectPublicKeyInfo {
    /// The subjectPublicKey bits (without the unused-bits byte), or nil when `der` is not an SPKI.
    static func publicKeyBits(_ der: [UInt8]) -> [UInt8]? {
        guard let (tag, outer, rest) = element(der[...]), tag == 0x30, rest.isEmpty,
            let (algTag, _, afterAlg) = element(outer), algTag == 0x30,
            let (bitsTag, bits, end) = element(afterAlg), bitsTag == 0x03, end.isEmpty,
            let unused = bits.first, unused == 0
        else { return nil }
        return Array(bits.dropFirst())
    }

    /// One TLV: tag, contents, what follows.
    static func element(_ s: ArraySlice<UInt8>) -> (UInt8, ArraySlice<UInt8>, ArraySlice<UInt8>)? {
        var i = s.startIndex
        guard i < s.endIndex else { return nil }
        let tag = s[i]
        i += 1
        guard i < s.endIndex else { return nil }
        var length = Int(s[i])
        i += 1
        if length & 0x80 != 0 {
            let n = length & 0x7F
            guard n > 0, n <= 4, s.endIndex - i >= n else { return nil }
            length = 0
            for _ in 0..<n {
                length = length << 8 | Int(s[i])
                i += 1
            }
        }
        guard length >= 0, s.endIndex - i >= length else { return nil }
        return (tag, s[i..<(i + length)], s[(i + length)...])
    }
}
