import NIOCore
import NIOHTTP1

/// A request for the server's own pages, as the HTTP handlers see it.
struct WebRequest {
    var method: HTTPMethod
    /// The path after the URL prefix (`/`, `/dashboard`, `/web/tlcp.js`, `/admin/api/…`).
    var path: Substring
    var headers: HTTPHeaders
    var body: ByteBuffer
    var clientIP: String?
}

/// A complete answer (the pages are small and held in memory).
struct WebResponse: Equatable {
    var status: HTTPResponseStatus
    var contentType: String
    var body: [UInt8]
    var headers: [(String, String)] = []
    /// `Content-Length` when it is not the body's (the answer to a HEAD request: the GET's length).
    var contentLength: Int? = nil

    static func == (a: WebResponse, b: WebResponse) -> Bool {
        a.status == b.status && a.contentType == b.contentType && a.body == b.body && a.contentLength == b.contentLength
            && a.headers.map { "\($0.0):\($0.1)" } == b.headers.map { "\($0.0):\($0.1)" }
    }

    static func text(_ status: HTTPResponseStatus, _ text: String, headers: [(String, String)] = []) -> WebResponse {
        WebResponse(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8), headers: headers)
    }
}

/// An answer now, or one that needs to wait (MPN actions call the MPN Module).
enum WebReply {
    case now(WebResponse)
    case later(@Sendable () async -> WebResponse)

    /// Calls `respond` on the channel's event loop with the response: at once, or when the
    /// work is done (and not at all if the channel closed meanwhile).
    func deliver(context: ChannelHandlerContext, _ respond: @escaping (WebResponse, ChannelHandlerContext) -> Void) {
        switch self {
        case .now(let r):
            respond(r, context)
        case .later(let work):
            let bound = NIOLoopBound((respond, context), eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            Task {
                let r = await work()
                eventLoop.execute {
                    let (respond, context) = bound.value
                    guard context.channel.isActive else { return }
                    respond(r, context)
                }
            }
        }
    }
}

extension WebResponse {
    /// Writes the response on an HTTP/1.1 channel (`Content-Length`, keep-alive or close).
    static func write(
        _ r: WebResponse, keepAlive: Bool, context: ChannelHandlerContext,
        wrap: (HTTPServerResponsePart) -> NIOAny, beforeEnd: () -> Void = {}
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: r.contentType)
        for (name, value) in r.headers { headers.add(name: name, value: value) }
        if r.status != .notModified { headers.add(name: "Content-Length", value: "\(r.contentLength ?? r.body.count)") }
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrap(.head(HTTPResponseHead(version: .http1_1, status: r.status, headers: headers))), promise: nil)
        if !r.body.isEmpty {
            context.write(wrap(.body(.byteBuffer(context.channel.allocator.buffer(bytes: r.body)))), promise: nil)
        }
        beforeEnd()
        context.writeAndFlush(wrap(.end(nil))).whenComplete { [channel = context.channel] _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }
}
