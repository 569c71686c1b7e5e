import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import TLCP

/// Builds the pipeline of an accepted connection (once admitted by the `ConnectionLimiter`):
/// optional TLS, the per-phase timeouts (`ConnectionTimeoutHandler`), HTTP/1.1 with
/// `HTTPPhaseObserver` and `RequestGate` (Origin, `/metrics`) in front of the TLCP HTTP handler,
/// and the upgrade to WebSocket at `<prefix>/lightstreamer` with TLCP subprotocol negotiation.
/// After the upgrade the pipeline holds the TLCP WebSocket handler alone: it cuts the bytes
/// into frames (`WebSocketFrameParser`), checks RFC 6455's rules (`WebSocketInbound`) and times
/// the wait for a session (`WebSocketSessionObserver`); the per-phase timeouts leave then.
struct FrontChannelInitializer: Sendable {
    let manager: SessionManager
    /// The server's own pages and the admin API (`WebFront`).
    let web: WebFront
    let urlPrefix: String
    let sslContext: NIOSSLContext?
    let logger: Logger
    let front: FrontOptions
    let limiter: ConnectionLimiter
    /// A WebSocket frame, and a message made of fragments (close 1009 beyond): the request limit
    /// advertised in CONOK, like an HTTP request's body.
    var maxFrameSize: Int { manager.settings.requestLimit }

    static let httpHandlerName = "tlcp-http"

    func initialize(_ channel: any Channel) -> EventLoopFuture<Void> {
        // Beyond the connection bounds: closed at once (NIO closes a child whose initializer fails).
        let address = channel.remoteAddress?.ipAddress ?? ""
        guard limiter.admit(address) else {
            logger.debug("refusing a connection over the limits", metadata: ["address": "\(address)"])
            return channel.eventLoop.makeFailedFuture(ConnectionRefused())
        }
        channel.closeFuture.whenComplete { [limiter] _ in limiter.release(address) }
        return channel.eventLoop.makeCompletedFuture {
            let sync = channel.pipeline.syncOperations
            if let sslContext {
                try sync.addHandler(NIOSSLServerHandler(context: sslContext))
            }
            let timeouts = ConnectionTimeoutHandler(limits: front.phaseLimits, tls: sslContext != nil, logger: logger)
            try sync.addHandler(timeouts)
            // The handlers `configureHTTPServerPipeline` would add, kept at hand: NIO's upgrade
            // handler only looks at the first request of a connection, so after every response
            // that leaves a keep-alive connection open a fresh one goes in front of the TLCP
            // handler (`armUpgrade`), and a later request on the connection may still upgrade.
            let encoder = HTTPResponseEncoder()
            let httpHandlers: [any RemovableChannelHandler] = [
                ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)),
                HTTPServerPipelineHandler(),
                NIOHTTPResponseHeadersValidator(),
                HTTPServerProtocolErrorHandler(),
                HTTPPhaseObserver(timeouts: timeouts),
                RequestGate(origins: OriginPolicy(allowedOrigins: front.allowedOrigins), servesMetrics: front.adminListener == nil),
            ]
            try sync.addHandler(encoder)
            try sync.addHandlers(httpHandlers)
            let armUpgrade: (ChannelHandlerContext) -> Void = { context in
                let upgradeHandler = makeUpgradeHandler(encoder: encoder, httpHandlers: httpHandlers)
                try? context.pipeline.syncOperations.addHandler(upgradeHandler, position: .before(context.handler))
            }
            try sync.addHandler(makeUpgradeHandler(encoder: encoder, httpHandlers: httpHandlers))
            try sync.addHandler(
                HTTPTLCPHandler(
                    manager: manager, urlPrefix: urlPrefix, logger: logger,
                    armUpgrade: armUpgrade, web: web),
                name: Self.httpHandlerName)
        }
    }

    private func makeUpgradeHandler(encoder: HTTPResponseEncoder, httpHandlers: [any RemovableChannelHandler]) -> HTTPServerUpgradeHandler {
        HTTPServerUpgradeHandler(
            upgraders: [makeUpgrader()], httpEncoder: encoder, extraHTTPHandlers: httpHandlers,
            upgradeCompletionHandler: { context in
                context.pipeline.removeHandler(name: Self.httpHandlerName, promise: nil)
            })
    }

    /// The WebSocket upgrader for `<prefix>/lightstreamer`, negotiating the TLCP subprotocol.
    /// The TLCP handler cuts frames and applies RFC 6455's rules itself (`WebSocketFrameParser`,
    /// `WebSocketInbound`).
    func makeUpgrader() -> TLCPWebSocketUpgrader {
        // Made once, not per request (the checks below allocate as little as they can: see
        // `HeaderTokens`).
        let endpoint = urlPrefix + "/lightstreamer"
        return TLCPWebSocketUpgrader(
            shouldUpgrade: { channel, head in
                let uri = head.uri
                let path = uri.firstIndex(of: "?").map { uri[..<$0] } ?? uri[...]
                guard path == endpoint else {
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                // RFC 6455 §4.2.1: `Connection` must carry the `Upgrade` token. Without it NIO's
                // HTTP parser does not stop at this request and parses what follows as HTTP,
                // and those parts would reach the WebSocket decoder after the upgrade (a trap
                // FuzzHTTPFront found). Refused, the request gets an HTTP answer.
                guard HeaderTokens.contains(head.headers, named: "Connection", token: "upgrade") else {
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                let offered = Self.offeredSubprotocols(head.headers)
                var headers = HTTPHeaders()
                if offered.isEmpty {
                    return channel.eventLoop.makeSucceededFuture(headers)
                }
                guard let version = TLCPVersion.negotiate(webSocketSubprotocols: offered) else {
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                // Echo the offered token that was chosen, exactly as offered.
                let chosen = offered.first { TLCPVersion(webSocketSubprotocol: $0) == version } ?? version.webSocketSubprotocol
                headers.add(name: "Sec-WebSocket-Protocol", value: chosen)
                return channel.eventLoop.makeSucceededFuture(headers)
            },
            setUp: { [manager, maxFrameSize, webSocketSessionMillis = front.phaseLimits.webSocketSessionMillis] channel, head in
                let offered = Self.offeredSubprotocols(head.headers)
                let version = TLCPVersion.negotiate(webSocketSubprotocols: offered) ?? .current
                let handler = WebSocketTLCPHandler(
                    manager: manager, version: version,
                    clientIP: channel.remoteAddress?.ipAddress,
                    headers: manager.engine.readsHTTPHeaders ? UpgradeHeaders(head.headers) : UpgradeHeaders(),
                    maxMessageBytes: maxFrameSize, sessionTimeoutMillis: webSocketSessionMillis,
                    eventLoop: channel.eventLoop)
                return channel.eventLoop.makeCompletedFuture {
                    // The TLCP handler runs the WebSocket's only timeout from here on (a session
                    // bound within `webSocketSessionMillis`, see `WebSocketSessionObserver`).
                    let sync = channel.pipeline.syncOperations
                    let timeouts = try sync.context(handlerType: ConnectionTimeoutHandler.self)
                    sync.removeHandler(context: timeouts, promise: nil)
                    try sync.addHandler(handler)
                }
            })
    }

    static func offeredSubprotocols(_ headers: HTTPHeaders) -> [String] {
        HeaderTokens.list(headers, named: "Sec-WebSocket-Protocol")
    }
}

/// The error that makes NIO close a connection accepted beyond the connection bounds.
struct ConnectionRefused: Error {}

extension StringProtocol {
    /// Without the spaces and tabs around it (`HeaderTokens.trimmed`).
    func trimmingCharacters() -> String {
        String(HeaderTokens.trimmed(Substring(self)))
    }
}
