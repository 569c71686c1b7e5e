import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import TLCP

/// Connections on SwiftNIO: WebSocket (subprotocol `TLCP-2.5.0.lightstreamer.com`) and HTTP/1.1
/// POSTs whose (possibly streamed, chunked) bodies are split into lines; TLS for wss/https.
final class NIOTransportFactory: TransportFactory, Sendable {
    static let shared = NIOTransportFactory(group: MultiThreadedEventLoopGroup.singleton)

    let group: EventLoopGroup
    private let sslContext: NIOSSLContext?
    /// Contexts with extra trust roots (tests), by their PEMs.
    private let extraContexts = NIOLockedValueBox<[[String]: NIOSSLContext]>([:])

    init(group: EventLoopGroup) {
        self.group = group
        sslContext = try? NIOSSLContext(configuration: .makeClientConfiguration())
    }

    private func context(for policy: TLSPolicy) throws -> NIOSSLContext {
        if policy.additionalTrustRootsPEM.isEmpty {
            guard let sslContext else { throw NIOConnectionError.tlsUnavailable }
            return sslContext
        }
        return try extraContexts.withLockedValue { extraContexts in
            if let c = extraContexts[policy.additionalTrustRootsPEM] { return c }
            var configuration = TLSConfiguration.makeClientConfiguration()
            let roots = try policy.additionalTrustRootsPEM.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) }
            configuration.additionalTrustRoots = [.certificates(roots)]
            let c = try NIOSSLContext(configuration: configuration)
            extraContexts[policy.additionalTrustRootsPEM] = c
            return c
        }
    }

    private func bootstrap(_ url: TransportURL) -> ClientBootstrap {
        ClientBootstrap(group: group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
    }

    /// TLS with standard validation; with pins, the validated leaf's key must also be one of
    /// them. The pin check runs in NIOSSL's verification hook after BoringSSL's own checks
    /// (a full custom verification callback would replace them), before any request byte is
    /// sent; a mismatch ends the connection with `rejected(62)`.
    private func addTLS(_ channel: Channel, _ url: TransportURL, _ policy: TLSPolicy, _ connection: NIOConnection) throws {
        guard url.secure else { return }
        let context = try context(for: policy)
        let hostname = url.hostIsIPAddress ? nil : url.host
        let handler: NIOSSLClientHandler
        if policy.pins.isEmpty {
            handler = try NIOSSLClientHandler(context: context, serverHostname: hostname)
        } else {
            let pins = policy.pins
            handler = try NIOSSLClientHandler._makeSSLClientHandler(context: context, serverHostname: hostname) { leaf, channel in
                if pins.matches(leaf: leaf) { return channel.eventLoop.makeSucceededVoidFuture() }
                connection.reject(code: 62, message: "The server's public key does not match the certificate pins")
                return channel.eventLoop.makeFailedFuture(NIOConnectionError.certificatePinMismatch)
            }
        }
        try channel.pipeline.syncOperations.addHandler(handler)
    }

    func openWebSocket(
        url text: String, headers: [String: String],
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        openWebSocket(url: text, headers: headers, tls: .standard, events: events)
    }

    func post(
        url text: String, body: String, headers: [String: String],
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        post(url: text, body: body, headers: headers, tls: .standard, events: events)
    }

    func openWebSocket(
        url text: String, headers: [String: String], tls: TLSPolicy,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        connectWebSocket(url: text, headers: headers, tls: tls, gate: nil, events: events)
    }

    func openWebSocket(
        url text: String, headers: [String: String], tls: TLSPolicy, gate: ReadGate,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        connectWebSocket(url: text, headers: headers, tls: tls, gate: gate, events: events)
    }

    private func connectWebSocket(
        url text: String, headers: [String: String], tls: TLSPolicy, gate: ReadGate?,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        let connection = NIOConnection(events: events)
        guard let url = TransportURL(text) else {
            connection.fail("Bad URL \(text)")
            return connection
        }
        var head = HTTPHeaders()
        head.add(name: "Host", value: url.hostHeader)
        head.add(name: "Sec-WebSocket-Protocol", value: TLCPVersion.current.webSocketSubprotocol)
        for (k, v) in headers { head.add(name: k, value: v) }
        let requestHead = HTTPRequestHead(version: .http1_1, method: .GET, uri: url.target, headers: head)
        let future = bootstrap(url).channelInitializer { [weak self] channel in
            do {
                if let gate { try channel.pipeline.syncOperations.addHandler(ReadGateHandler(gate: gate)) }
                try self?.addTLS(channel, url, tls, connection)
                let requestHandler = UpgradeRequestHandler(head: requestHead, connection: connection)
                let boundRequestHandler = NIOLoopBound(requestHandler, eventLoop: channel.eventLoop)
                let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 24, automaticErrorHandling: true) { channel, response in
                    let setCookies = response.headers["Set-Cookie"]
                    CookieJar.store(setCookieHeaders: setCookies, for: text)
                    return channel.eventLoop.makeCompletedFuture {
                        channel.pipeline.syncOperations.removeHandler(boundRequestHandler.value, promise: nil)
                        try channel.pipeline.syncOperations.addHandler(WebSocketLineHandler(connection: connection))
                    }
                }
                let config: NIOHTTPClientUpgradeConfiguration = (
                    upgraders: [upgrader],
                    completionHandler: { _ in
                        connection.upgraded()
                    }
                )
                try channel.pipeline.syncOperations.addHTTPClientHandlers(leftOverBytesStrategy: .forwardBytes, withClientUpgrade: config)
                try channel.pipeline.syncOperations.addHandler(requestHandler)
                return channel.eventLoop.makeSucceededVoidFuture()
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }.connect(host: url.host, port: url.port)
        connection.attach(future)
        return connection
    }

    func post(
        url text: String, body: String, headers: [String: String], tls: TLSPolicy,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        connectPost(url: text, body: body, headers: headers, tls: tls, gate: nil, events: events)
    }

    func post(
        url text: String, body: String, headers: [String: String], tls: TLSPolicy, gate: ReadGate,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        connectPost(url: text, body: body, headers: headers, tls: tls, gate: gate, events: events)
    }

    private func connectPost(
        url text: String, body: String, headers: [String: String], tls: TLSPolicy, gate: ReadGate?,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> TransportConnection {
        let connection = NIOConnection(events: events)
        guard let url = TransportURL(text) else {
            connection.fail("Bad URL \(text)")
            return connection
        }
        var head = HTTPHeaders()
        head.add(name: "Host", value: url.hostHeader)
        head.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        head.add(name: "Content-Length", value: String(body.utf8.count))
        for (k, v) in headers { head.add(name: k, value: v) }
        let requestHead = HTTPRequestHead(version: .http1_1, method: .POST, uri: url.target, headers: head)
        let future = bootstrap(url).channelInitializer { [weak self] channel in
            do {
                if let gate { try channel.pipeline.syncOperations.addHandler(ReadGateHandler(gate: gate)) }
                try self?.addTLS(channel, url, tls, connection)
                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                try channel.pipeline.syncOperations.addHandler(
                    HTTPLineHandler(head: requestHead, body: body, url: text, connection: connection))
                return channel.eventLoop.makeSucceededVoidFuture()
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }.connect(host: url.host, port: url.port)
        connection.attach(future)
        return connection
    }
}

/// Holds the channel's reads while the client's read gate is closed (flow control: see
/// `ReadGate`); the held read is issued when the gate opens.
final class ReadGateHandler: ChannelOutboundHandler {
    typealias OutboundIn = Any

    let gate: ReadGate
    private var held = false
    private var removed = false

    init(gate: ReadGate) { self.gate = gate }

    func handlerRemoved(context: ChannelHandlerContext) { removed = true }

    func read(context: ChannelHandlerContext) {
        if held || removed { return }
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        let open = gate.admit(orWhenOpen: {
            loop.execute {
                let (handler, context) = bound.value
                guard handler.held, !handler.removed else { return }
                handler.held = false
                handler.read(context: context)
            }
        })
        if open { context.read() } else { held = true }
    }
}

/// Sends the upgrade GET when the channel becomes active.
final class UpgradeRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let head: HTTPRequestHead
    let connection: NIOConnection

    init(head: HTTPRequestHead, connection: NIOConnection) {
        self.head = head
        self.connection = connection
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A response that did not upgrade.
        // (Removed from the pipeline once the upgrade succeeds.)
        if case .head(let h) = unwrapInboundIn(data) {
            connection.fail("WebSocket upgrade refused: HTTP \(h.status.code)")
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.fail("connection closed before the WebSocket upgrade")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        connection.fail("\(error)")
        context.close(promise: nil)
    }
}

/// WebSocket frames to lines; answers pings and close frames.
final class WebSocketLineHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let connection: NIOConnection
    private var message = ByteBuffer()
    private var inText = false

    init(connection: NIOConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            message.clear()
            inText = true
            var d = frame.unmaskedData
            message.writeBuffer(&d)
            if frame.fin { deliver() }
        case .continuation:
            guard inText else { return }
            var d = frame.unmaskedData
            message.writeBuffer(&d)
            if message.readableBytes > 64 << 20 {
                connection.fail("WebSocket message too long")
                context.close(promise: nil)
                return
            }
            if frame.fin { deliver() }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var data = context.channel.allocator.buffer(capacity: 2)
            data.write(webSocketErrorCode: .normalClosure)
            let close = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(close)).whenComplete { _ in channel.close(promise: nil) }
            connection.emit(.closed)
        default:
            _ = frame.data.readableBytes
            frame.data.clear()
        }
    }

    private func deliver() {
        inText = false
        // One `String` per line, straight from the message's bytes.
        let lines = message.withUnsafeReadableBytes { raw in
            raw.withMemoryRebound(to: UInt8.self) { LineSplitter.lines(ofMessageBytes: $0) }
        }
        message.clear()
        if !lines.isEmpty { connection.emit(.lines(lines)) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.emit(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        connection.fail("\(error)")
        context.close(promise: nil)
    }
}

/// Sends one POST and turns its response body into lines.
final class HTTPLineHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let head: HTTPRequestHead
    let body: String
    let url: String
    let connection: NIOConnection
    private var splitter = LineSplitter()
    private var ok = false

    init(head: HTTPRequestHead, body: String, url: String, connection: NIOConnection) {
        self.head = head
        self.body = body
        self.url = url
        self.connection = connection
    }

    func channelActive(context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
        buffer.writeString(body)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            CookieJar.store(setCookieHeaders: h.headers["Set-Cookie"], for: url)
            if h.status == .ok {
                ok = true
            } else {
                connection.fail("HTTP \(h.status.code)")
                context.close(promise: nil)
            }
        case .body(let buffer):
            guard ok else { return }
            do {
                let lines = try buffer.withUnsafeReadableBytes { try splitter.append($0) }
                if !lines.isEmpty { connection.emit(.lines(lines)) }
            } catch {
                connection.fail("line too long")
                context.close(promise: nil)
            }
        case .end:
            guard ok else { return }
            if splitter.pendingByteCount > 0, let last = try? splitter.append([0x0A]), !last.isEmpty {
                connection.emit(.lines(last))
            }
            connection.emit(.closed)
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.fail("connection closed")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        connection.fail("\(error)")
        context.close(promise: nil)
    }
}

/// Lives on its channel's event loop only.
@available(*, unavailable)
extension ReadGateHandler: Sendable {}

/// Lives on its channel's event loop only.
@available(*, unavailable)
extension UpgradeRequestHandler: Sendable {}

/// Lives on its channel's event loop only.
@available(*, unavailable)
extension WebSocketLineHandler: Sendable {}

/// Lives on its channel's event loop only.
@available(*, unavailable)
extension HTTPLineHandler: Sendable {}
