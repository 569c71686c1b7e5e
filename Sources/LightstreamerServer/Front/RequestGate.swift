import NIOCore
import NIOHTTP1

/// Turns requests away before routing: those whose `Origin` is not allowed (403, for the
/// WebSocket upgrade and plain HTTP alike) and `/metrics` when it is served on the admin
/// listener instead (404). The connection is closed after the answer. Removed with the other
/// HTTP handlers on a WebSocket upgrade.
final class RequestGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let origins: OriginPolicy
    private let servesMetrics: Bool
    private var refusing = false

    init(origins: OriginPolicy, servesMetrics: Bool) {
        self.origins = origins
        self.servesMetrics = servesMetrics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        if case .head(let head) = unwrapInboundIn(data) {
            if let origin = head.headers.first(name: "Origin"), !origins.allows(origin) {
                refuse(.forbidden, "Origin not allowed\r\n", context: context)
                return
            }
            if !servesMetrics, head.uri.split(separator: "?", maxSplits: 1).first == "/metrics" {
                refuse(.notFound, "Not found\r\n", context: context)
                return
            }
        }
        context.fireChannelRead(data)
    }

    private func refuse(_ status: HTTPResponseStatus, _ text: String, context: ChannelHandlerContext) {
        refusing = true
        let body = context.channel.allocator.buffer(string: text)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=UTF-8")
        headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension RequestGate: Sendable {}

/// Which `Origin` header values are accepted: all (nil list, or one holding `*`), or those
/// listed, compared without regard to case (`https://app.example.com`, with the port when it
/// is not the scheme's default). Requests without `Origin` (not from a browser) are accepted.
struct OriginPolicy: Sendable, Equatable {
    private let allowed: Set<String>?

    init(allowedOrigins: [String]?) {
        if let list = allowedOrigins, !list.contains("*") {
            allowed = Set(list.map { Self.normalized($0) })
        } else {
            allowed = nil
        }
    }

    func allows(_ origin: String) -> Bool {
        guard let allowed else { return true }
        return allowed.contains(Self.normalized(origin))
    }

    private static func normalized(_ origin: String) -> String {
        var s = origin.trimmingCharacters().lowercased()
        while s.hasSuffix("/") { s.removeLast() }
        return s
    }
}
