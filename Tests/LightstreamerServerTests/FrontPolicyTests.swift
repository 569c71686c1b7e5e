import Foundation
import MPNTestSupport
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import LightstreamerServer

/// Origin allow-list, the admin listener for `/metrics`, and TLS versions and handshake time.
@Suite(.timeLimit(.minutes(1))) struct FrontPolicyTests {
    @Test func originPolicyComparesWithoutCaseAndTrailingSlash() {
        let all = OriginPolicy(allowedOrigins: nil)
        #expect(all.allows("https://anything.example"))
        #expect(OriginPolicy(allowedOrigins: ["*"]).allows("https://x"))
        let some = OriginPolicy(allowedOrigins: ["https://App.example.com", "http://localhost:8080/"])
        #expect(some.allows("https://app.example.com"))
        #expect(some.allows("http://localhost:8080"))
        #expect(!some.allows("https://evil.example"))
        #expect(!some.allows("http://localhost:8081"))
        #expect(!some.allows("null"))
    }

    static func webSocketRequest(origin: String?) -> String {
        var r = "GET /lightstreamer HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        r += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        r += "Sec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com\r\n"
        if let origin { r += "Origin: \(origin)\r\n" }
        return r + "\r\n"
    }

    @Test func originsOutsideTheListAreRefusedWith403() async throws {
        try await FrontIntegrationTests.withServer(configure: { $0.front.allowedOrigins = ["https://app.example.com"] }) { server, group in
            let port = try #require(server.port)
            let refused = try await RawTestConnection.connect(port: port, group: group)
            try await refused.send(Self.webSocketRequest(origin: "https://evil.example"))
            #expect(await refused.waitFor("HTTP/1.1 403"))
            #expect(!refused.text.contains(" 101 "))
            #expect(await refused.waitClosed())

            let allowed = try await RawTestConnection.connect(port: port, group: group)
            try await allowed.send(Self.webSocketRequest(origin: "https://app.example.com"))
            #expect(await allowed.waitFor(" 101 "))

            let noOrigin = try await RawTestConnection.connect(port: port, group: group)
            try await noOrigin.send(Self.webSocketRequest(origin: nil))
            #expect(await noOrigin.waitFor(" 101 "))

            let http = try await RawTestConnection.connect(port: port, group: group)
            try await http.send(
                "POST /lightstreamer/create_session.txt HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\n"
                    + "Content-Length: 8\r\n\r\nLS_cid=x")
            #expect(await http.waitFor("HTTP/1.1 403"))
            #expect(!http.text.contains("CONOK"))
            for c in [allowed, noOrigin] { await c.close() }
        }
    }

    @Test func allOriginsAreAllowedByDefault() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let c = try await RawTestConnection.connect(port: try #require(server.port), group: group)
            try await c.send(Self.webSocketRequest(origin: "https://anywhere.example"))
            #expect(await c.waitFor(" 101 "))
        }
    }

    @Test func metricsMoveToTheAdminListener() async throws {
        try await FrontIntegrationTests.withServer(configure: { $0.front.adminListener = ("127.0.0.1", 0) }) { server, group in
            let main = try await RawTestConnection.connect(port: try #require(server.port), group: group)
            try await main.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await main.waitFor("HTTP/1.1 404"))
            #expect(!main.text.contains("lightstreamer_sessions_active"))

            let adminPort = try #require(server.adminPort)
            #expect(adminPort != server.port)
            let admin = try await RawTestConnection.connect(port: adminPort, group: group)
            try await admin.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await admin.waitFor("lightstreamer_sessions_active 0"))
            admin.forget()
            try await admin.send("GET /lightstreamer/create_session.txt HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await admin.waitFor("HTTP/1.1 404"))
        }
    }

    // MARK: - TLS

    static func withTLSServer(
        configure: (inout ServerOptions) -> Void = { _ in },
        _ body: (Int, MultiThreadedEventLoopGroup) async throws -> Void
    ) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ls-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let cert = dir.appendingPathComponent("cert.pem").path
        let key = dir.appendingPathComponent("key.pem").path
        let leaf = try TestCertificateAuthority(name: "Front policy test CA").issueServerCertificate(host: "localhost")
        try leaf.pem.write(toFile: cert, atomically: true, encoding: .utf8)
        try leaf.keyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        try await FrontIntegrationTests.withServer(configure: { o in
            o.tlsCertificateChainFile = cert
            o.tlsPrivateKeyFile = key
            configure(&o)
        }) { server, group in
            try await body(try #require(server.port), group)
        }
    }

    /// Connects with TLS limited to `maximum` and asks for `/`; whether the answer came.
    static func served(port: Int, group: any EventLoopGroup, maximum: TLSVersion) async throws -> Bool {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        tls.minimumTLSVersion = .tlsv1
        tls.maximumTLSVersion = maximum
        let context = try NIOSSLContext(configuration: tls)
        let received = NIOLockedValueBoxString()
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { ch in
                ch.eventLoop.makeCompletedFuture {
                    try ch.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    try ch.pipeline.syncOperations.addHandler(received)
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try? await channel.writeAndFlush(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")).get()
        for _ in 0..<300 {
            if received.text.contains("Lightstreamer Swift Server") || !channel.isActive { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        try? await channel.close()
        return received.text.contains("Lightstreamer Swift Server")
    }

    @Test func tls11IsRefusedAndTls12ServedByDefault() async throws {
        try await Self.withTLSServer { port, group in
            let served11 = try await Self.served(port: port, group: group, maximum: .tlsv11)
            #expect(!served11)
            let served12 = try await Self.served(port: port, group: group, maximum: .tlsv12)
            #expect(served12)
            let served13 = try await Self.served(port: port, group: group, maximum: .tlsv13)
            #expect(served13)
        }
    }

    @Test func aMinimumOf13RefusesTls12() async throws {
        try await Self.withTLSServer(configure: { $0.front.tlsMinimumVersion = .tlsv13 }) { port, group in
            let served12 = try await Self.served(port: port, group: group, maximum: .tlsv12)
            #expect(!served12)
            let served13 = try await Self.served(port: port, group: group, maximum: .tlsv13)
            #expect(served13)
        }
    }

    @Test func anUnfinishedTLSHandshakeIsClosed() async throws {
        try await Self.withTLSServer(configure: { o in
            o.front.tlsHandshakeTimeoutMillis = 3_000
            o.front.requestHeadTimeoutMillis = 60_000
        }) { port, group in
            let c = try await RawTestConnection.connect(port: port, group: group)
            // The first bytes of a ClientHello record, and nothing more. On a loaded machine the
            // handshake deadline can pass before these bytes go out; the channel is then already
            // closed by the server, which is the behaviour under test, so a failed send is fine.
            try? await c.send([0x16, 0x03, 0x01, 0x00, 0xF0, 0x01])
            #expect(await c.waitClosed(seconds: 10))
        }
    }
}
