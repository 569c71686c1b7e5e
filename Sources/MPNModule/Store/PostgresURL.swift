import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// The PostgreSQL store's connection URL:
/// `postgres://user[:password]@host[:port]/database[?sslmode=MODE][&sslrootcert=FILE]`.
///
/// `sslmode` (the libpq names, docs/CONFIG.md):
/// - `disable`: no TLS. The default when the host is loopback (`localhost`, `127.0.0.1`, `::1`).
/// - `prefer`: TLS when the server offers it, else plain (no protection against an active attacker).
/// - `require`: TLS or no connection; the server certificate is not checked (encryption only).
/// - `verify-ca`: TLS, the certificate must chain to a trusted root (host name not checked).
/// - `verify-full`: TLS, trusted chain and matching host name. The default for any other host.
/// `sslrootcert`: a PEM file of trusted roots instead of the system's (for `verify-ca`/`verify-full`).
/// Any other `sslmode` is refused.
struct PostgresURL: Sendable, Hashable {
    enum SSLMode: String, Sendable, CaseIterable {
        case disable, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String?
    var sslMode: SSLMode
    var rootCertificateFile: String?

    static func isLoopback(_ host: String) -> Bool {
        ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased()) || host.hasPrefix("127.")
    }

    static func parse(_ text: String) throws -> PostgresURL {
        guard let c = URLComponents(string: text), c.scheme == "postgres" || c.scheme == "postgresql",
            let host = c.host, !host.isEmpty, let user = c.user, !user.isEmpty
        else {
            throw MPNStoreError("bad PostgreSQL URL (expected postgres://user[:password]@host[:port]/database)")
        }
        let database = c.path.hasPrefix("/") ? String(c.path.dropFirst()) : c.path
        let query = c.queryItems ?? []
        let mode: SSLMode
        if let text = query.first(where: { $0.name == "sslmode" })?.value {
            guard let m = SSLMode(rawValue: text) else {
                throw MPNStoreError("unsupported sslmode \(text) (use \(SSLMode.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            mode = m
        } else {
            mode = isLoopback(host) ? .disable : .verifyFull
        }
        return PostgresURL(
            host: host, port: c.port ?? 5432, user: user, password: c.password,
            database: database.isEmpty ? nil : database, sslMode: mode,
            rootCertificateFile: query.first(where: { $0.name == "sslrootcert" })?.value)
    }

    /// The TLS settings of `sslMode` (nil: no TLS).
    func tlsConfiguration() -> TLSConfiguration? {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch sslMode {
        case .disable: return nil
        case .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let file = rootCertificateFile { tls.trustRoots = .file(file) }
        return tls
    }

    func clientConfiguration() throws -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch (sslMode, tlsConfiguration()) {
        case (.disable, _), (_, nil): tls = .disable
        case (.prefer, let t?): tls = .prefer(t)
        case (_, let t?): tls = .require(t)
        }
        var config = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password,
            database: database, tls: tls)
        config.options.maximumConnections = 10
        return config
    }

    /// Connects once and closes: a refused TLS handshake, a server without TLS or bad
    /// credentials become an `MPNStoreError` naming the host and the `sslmode`.
    func checkConnection(on eventLoopGroup: any EventLoopGroup, logger: Logger) async throws {
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch (sslMode, tlsConfiguration()) {
            case (.disable, _), (_, nil): tls = .disable
            case (.prefer, let t?): tls = .prefer(try NIOSSLContext(configuration: t))
            case (_, let t?): tls = .require(try NIOSSLContext(configuration: t))
            }
        } catch {
            throw MPNStoreError("PostgreSQL TLS settings unusable (sslmode=\(sslMode.rawValue)): \(error)")
        }
        let config = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password,
            database: database, tls: tls)
        do {
            let connection = try await PostgresConnection.connect(
                on: eventLoopGroup.any(),
                configuration: config, id: 0, logger: logger
            ).get()
            try? await connection.close()
        } catch let e as PSQLError where e.code == .sslUnsupported {
            throw MPNStoreError("PostgreSQL server \(host):\(port) does not offer TLS, required by sslmode=\(sslMode.rawValue)")
        } catch {
            throw MPNStoreError("cannot connect to PostgreSQL \(host):\(port) (sslmode=\(sslMode.rawValue)): \(String(reflecting: error))")
        }
    }
}
