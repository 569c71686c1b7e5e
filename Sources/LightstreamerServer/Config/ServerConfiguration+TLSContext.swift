import Foundation
import NIOSSL

/// Why the PEM files of a `tls` object (the client port's, or a remote adapter port's) cannot
/// serve TLS. Raised at start-up, before the port is bound.
public struct TLSFilesError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the file.
    public enum Reason: Sendable, Hashable {
        /// The file does not exist or cannot be read.
        case unreadable
        /// Larger than `ServerConfiguration.TLS.maxFileBytes`.
        case tooLarge
        /// No PEM certificate in the chain file.
        case noCertificate
        /// The file is not PEM the TLS library can read (the library's words).
        case badPEM(String)
        /// The key does not go with the chain's first certificate, or the library refused the
        /// pair (the library's words).
        case unusable(String)
    }

    /// `certificateChainPath` or `privateKeyPath`.
    public var key: String
    /// The file named by `key`.
    public var path: String
    /// What is wrong with it.
    public var reason: Reason

    /// A line for the log: the configuration key, the file and what is wrong.
    public var description: String {
        switch reason {
        case .unreadable: "tls.\(key): cannot read \(path) (missing file or no permission)"
        case .tooLarge: "tls.\(key): \(path) is larger than \(ServerConfiguration.TLS.maxFileBytes) bytes"
        case .noCertificate: "tls.\(key): no PEM certificate (-----BEGIN CERTIFICATE-----) in \(path)"
        case .badPEM(let detail): "tls.\(key): \(path) is not a usable PEM file (\(detail))"
        case .unusable(let detail): "tls: the private key \(path) cannot serve the certificate chain (\(detail))"
        }
    }
}

extension ServerConfiguration.TLS {
    /// PEM files larger than this are refused (a chain of a few certificates is a few KB).
    public static let maxFileBytes = 1 << 20

    /// The server-side TLS context for these PEM files, checked one by one so that the error
    /// names the file and what is wrong with it.
    public func makeServerContext(minimumVersion: TLSVersion = .tlsv12) throws(TLSFilesError) -> NIOSSLContext {
        let chainBytes = try Self.read(certificateChainPath, key: "certificateChainPath")
        let keyBytes = try Self.read(privateKeyPath, key: "privateKeyPath")
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(chainBytes)
        } catch {
            throw TLSFilesError(key: "certificateChainPath", path: certificateChainPath, reason: .badPEM("\(error)"))
        }
        guard !chain.isEmpty else {
            throw TLSFilesError(key: "certificateChainPath", path: certificateChainPath, reason: .noCertificate)
        }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem)
        } catch {
            throw TLSFilesError(key: "privateKeyPath", path: privateKeyPath, reason: .badPEM("\(error)"))
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = minimumVersion
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw TLSFilesError(key: "privateKeyPath", path: privateKeyPath, reason: .unusable("\(error)"))
        }
    }

    static func read(_ path: String, key: String) throws(TLSFilesError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw TLSFilesError(key: key, path: path, reason: .unreadable)
        }
        defer { try? handle.close() }
        let data: Data?
        do {
            data = try handle.read(upToCount: Self.maxFileBytes + 1)
        } catch {
            throw TLSFilesError(key: key, path: path, reason: .unreadable)
        }
        let bytes = [UInt8](data ?? Data())
        guard bytes.count <= Self.maxFileBytes else { throw TLSFilesError(key: key, path: path, reason: .tooLarge) }
        return bytes
    }
}
