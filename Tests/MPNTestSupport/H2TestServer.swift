import AsyncHTTPClient
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import X509

/// A local HTTP/2-over-TLS server for provider tests: a self-signed certificate made at start
/// (swift-certificates), ALPN `h2` only, every request recorded and answered by a script.
public final class H2TestServer: Sendable {
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var version: HTTPVersion
        public var headers: HTTPHeaders
        public var body: String
        public func header(_ name: String) -> String? { headers.first(name: name) }
    }

    public struct Response: Sendable {
        public var status: Int
        public var headers: [(String, String)] = []
        public var body: String = ""

        public init(status: Int, headers: [(String, String)] = [], body: String = "") {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    public typealias Script = @Sendable (Request) -> Response

    public let port: Int
    /// The CA certificate clients must trust.
    public let certificate: NIOSSLCertificate
    private let channel: any Channel
    private let recorded: NIOLockedValueBox<[Request]>

    public var requests: [Request] { recorded.withLockedValue { $0 } }
    public var baseURL: String { "https://localhost:\(port)" }

    private init(port: Int, certificate: NIOSSLCertificate, channel: any Channel, recorded: NIOLockedValueBox<[Request]>) {
        self.port = port
        self.certificate = certificate
        self.channel = channel
        self.recorded = recorded
    }

    public static func start(script: @escaping Script) async throws -> H2TestServer {
        let authority = try TestCertificateAuthority(name: "MPN test CA")
        let leaf = try authority.issueServerCertificate(host: "localhost")
        let sslCert = try NIOSSLCertificate(bytes: Array(leaf.pem.utf8), format: .pem)
        let caCert = try NIOSSLCertificate(bytes: Array(authority.pem.utf8), format: .pem)
        let sslKey = try NIOSSLPrivateKey(bytes: Array(leaf.keyDER), format: .der)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(sslCert)], privateKey: .privateKey(sslKey))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let recorded = NIOLockedValueBox<[Request]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                            try stream.pipeline.syncOperations.addHandler(ScriptedHandler(script: script, recorded: recorded))
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        return H2TestServer(port: port, certificate: caCert, channel: channel, recorded: recorded)
    }

    public func shutdown() async {
        try? await channel.close()
    }
}

private final class ScriptedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let script: H2TestServer.Script
    let recorded: NIOLockedValueBox<[H2TestServer.Request]>
    var head: HTTPRequestHead?
    var body = ""

    init(script: @escaping H2TestServer.Script, recorded: NIOLockedValueBox<[H2TestServer.Request]>) {
        self.script = script
        self.recorded = recorded
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = ""
        case .body(let buffer):
            body += String(buffer: buffer)
        case .end:
            guard let head else { return }
            let request = H2TestServer.Request(
                method: head.method.rawValue, path: head.uri, version: head.version,
                headers: head.headers, body: body)
            recorded.withLockedValue { $0.append(request) }
            let response = script(request)
            var headers = HTTPHeaders(response.headers)
            headers.add(name: "content-length", value: String(response.body.utf8.count))
            context.write(
                wrapOutboundOut(
                    .head(
                        HTTPResponseHead(
                            version: head.version,
                            status: HTTPResponseStatus(statusCode: response.status),
                            headers: headers))), promise: nil)
            if !response.body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: response.body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

/// An HTTP client that trusts only the test server's self-signed certificate.
public func testHTTPClient(trusting certificate: NIOSSLCertificate) -> HTTPClient {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates([certificate])
    var config = HTTPClient.Configuration(tlsConfiguration: tls)
    config.httpVersion = .automatic
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
}
