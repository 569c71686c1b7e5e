import Foundation
import MPNTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import LightstreamerServer

/// TLS via swift-nio-ssl when the options name a certificate and key (a throw-away CA's
/// `localhost` certificate, made in process).
@Suite(.timeLimit(.minutes(1))) struct FrontTLSTests {
    @Test
    func tlsServesTLCPOverHTTPS() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ls-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let cert = dir.appendingPathComponent("cert.pem").path
        let key = dir.appendingPathComponent("key.pem").path
        let leaf = try TestCertificateAuthority(name: "Front TLS test CA").issueServerCertificate(host: "localhost")
        try leaf.pem.write(toFile: cert, atomically: true, encoding: .utf8)
        try leaf.keyPEM.write(toFile: key, atomically: true, encoding: .utf8)

        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.threads = 1
        options.tlsCertificateChainFile = cert
        options.tlsPrivateKeyFile = key
        let server = LightstreamerServer(options: options, adapterSets: [DemoAdapters.makeDemoAdapterSet()])
        try await server.start()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let context = try NIOSSLContext(configuration: tls)
        let received = NIOLockedValueBoxString()
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { ch in
                ch.eventLoop.makeCompletedFuture {
                    try ch.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    try ch.pipeline.syncOperations.addHandler(received)
                }
            }
            .connect(host: "127.0.0.1", port: try #require(server.port)).get()
        let body = "LS_polling=true&LS_polling_millis=0&LS_idle_millis=0&LS_cid=x&LS_adapter_set=DEMO"
        try await channel.writeAndFlush(
            ByteBuffer(
                string:
                    "POST /lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0 HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        ).get()
        var ok = false
        for _ in 0..<500 where !ok {
            ok = received.text.contains("LOOP,0")
            if !ok { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(ok, "received: \(received.text)")
        #expect(received.text.contains("CONOK,"))
        try? await channel.close()
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}

/// Collects received bytes as text.
final class NIOLockedValueBoxString: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let box = NIOLockedValueBox("")
    var text: String { box.withLockedValue { $0 } }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let s = String(buffer: unwrapInboundIn(data))
        box.withLockedValue { $0 += s }
    }
}
