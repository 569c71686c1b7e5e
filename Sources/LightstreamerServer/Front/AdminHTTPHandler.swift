import NIOCore
import NIOHTTP1

/// The admin listener's pages: `GET /metrics` (Prometheus text) and the health endpoints
/// (`HealthEndpoint`); anything else is 404.
final class AdminHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let metrics: ServerMetrics
    private let health: ServerHealth
    private let nodeName: String?
    private var head: HTTPRequestHead?

    init(metrics: ServerMetrics, health: ServerHealth, nodeName: String?) {
        self.metrics = metrics
        self.health = health
        self.nodeName = nodeName
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
        case .body:
            break
        case .end:
            guard let h = head else { return }
            head = nil
            let path = h.uri.split(separator: "?", maxSplits: 1).first ?? ""
            if let (status, text) = HealthEndpoint.response(path: path, health: health, nodeName: nodeName) {
                respond(status, text, contentType: HealthEndpoint.contentType, keepAlive: h.isKeepAlive, context: context)
            } else if path == "/metrics", h.method == .GET || h.method == .HEAD {
                respond(.ok, metrics.prometheusText(nowMillis: monotonicMillis()),
                        contentType: "text/plain; version=0.0.4; charset=utf-8", keepAlive: h.isKeepAlive, context: context)
            } else {
                respond(.notFound, "Not found\r\n", contentType: "text/plain; charset=UTF-8", keepAlive: h.isKeepAlive,
                        context: context)
            }
        }
    }

    private func respond(_ status: HTTPResponseStatus, _ text: String, contentType: String, keepAlive: Bool,
                         context: ChannelHandlerContext) {
        let body = context.channel.allocator.buffer(string: text)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension AdminHTTPHandler: Sendable {}
