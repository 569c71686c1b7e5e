import Foundation
import NIOSSL
import Testing

@testable import MPNModule

/// `sslmode` of the PostgreSQL store's URL.
@Suite("PostgreSQL store TLS settings")
struct PostgresTLSTests {
    @Test("sslmode parsing and defaults: disable on loopback, verify-full elsewhere, unknown modes refused")
    func parsing() throws {
        #expect(try PostgresURL.parse("postgres://u@localhost/db").sslMode == .disable)
        #expect(try PostgresURL.parse("postgres://u@127.0.0.1:5433/db").sslMode == .disable)
        #expect(try PostgresURL.parse("postgres://u@[::1]/db").sslMode == .disable)
        #expect(try PostgresURL.parse("postgres://u:p@db.example.com/db").sslMode == .verifyFull)
        for mode in PostgresURL.SSLMode.allCases {
            #expect(try PostgresURL.parse("postgres://u@db.example.com/db?sslmode=\(mode.rawValue)").sslMode == mode)
        }
        let u = try PostgresURL.parse("postgresql://u:secret@db.example.com:6543/mpn?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(u.host == "db.example.com" && u.port == 6543 && u.user == "u" && u.password == "secret" && u.database == "mpn")
        #expect(u.rootCertificateFile == "/etc/ca.pem")
        #expect(u.tlsConfiguration()?.certificateVerification == .fullVerification)
        #expect(
            try PostgresURL.parse("postgres://u@h/db?sslmode=require").tlsConfiguration()?.certificateVerification
                == CertificateVerification.none)
        #expect(
            try PostgresURL.parse("postgres://u@h/db?sslmode=verify-ca").tlsConfiguration()?.certificateVerification
                == .noHostnameVerification)
        #expect(try PostgresURL.parse("postgres://u@h/db?sslmode=disable").tlsConfiguration() == nil)
        for bad in ["postgres://u@h/db?sslmode=allow", "postgres://u@h/db?sslmode=REQUIRE", "postgres://h/db", "mysql://u@h/db"] {
            #expect(throws: MPNStoreError.self, "\(bad)") { try PostgresURL.parse(bad) }
        }
    }

    @Test(
        "require against the test cluster (no TLS) fails with a clear error; disable works",
        .enabled(if: StoreKind.postgresURL != nil, "LS_TEST_POSTGRES_URL is not set (scripts/test.sh sets it)"))
    func requireWithoutTLS() async throws {
        let url = try #require(StoreKind.postgresURL)
        let separator = url.contains("?") ? "&" : "?"
        var message = ""
        do {
            let store = try await PostgresMPNStore.open(url: url + separator + "sslmode=require", schema: "mpn_tls_require")
            await store.close()
        } catch let e as MPNStoreError {
            message = e.message
        }
        #expect(message.contains("does not offer TLS") && message.contains("sslmode=require"), "\(message)")
        let store = try await PostgresMPNStore.open(url: url + separator + "sslmode=disable", schema: "mpn_tls_disable")
        #expect(try await store.allDevices().isEmpty)
        try await store.dropSchema()
        await store.close()
    }
}
