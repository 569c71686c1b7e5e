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

/// Routes the pages the server serves itself (docs/ADMIN.md): the welcome page `/`, the
/// monitoring dashboard `/dashboard` (admin only), their files under `/web/`, and the admin
/// API under `/admin/api/` (`AdminAPI`). Returns nil for any other path, which the TLCP
/// handler answers as before.
struct WebFront: Sendable {
    let site: StaticSite
    let admin: AdminAPI?

    /// Security headers of every page and file: no sniffing, no framing, only our own scripts.
    static let pageHeaders: [(String, String)] = [
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Content-Security-Policy",
         "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:; frame-ancestors 'none'"),
    ]

    func respond(_ request: WebRequest) -> WebReply? {
        if request.path.hasPrefix(AdminAPI.prefix) {
            guard let admin else { return .now(.text(.notFound, "Not found\r\n")) }
            return admin.respond(request)
        }
        return page(request).map { .now($0) }
    }

    private func page(_ request: WebRequest) -> WebResponse? {
        let path = request.path
        let file: StaticSite.File?
        switch path {
        case "/":
            // Without the pages (a build without its resources), `/` answers as before.
            guard let index = site.files["index.html"] else { return nil }
            file = index
        case "/dashboard":
            if let admin, let refusal = admin.viewRefusal(request) { return refusal }
            if admin == nil { return .text(.notFound, "Not found\r\n") }
            file = site.files["dashboard.html"]
        default:
            guard path.hasPrefix("/web/") else { return nil }
            file = site.asset(path.dropFirst("/web/".count))
        }
        guard let file else { return .text(.notFound, "Not found\r\n") }
        guard request.method == .GET || request.method == .HEAD else {
            return .text(.methodNotAllowed, "Use GET\r\n", headers: [("Allow", "GET, HEAD")])
        }
        var headers = Self.pageHeaders
        headers.append(("Cache-Control", "no-cache"))
        headers.append(("ETag", file.etag))
        if request.headers[canonicalForm: "If-None-Match"].contains(where: { $0 == Substring(file.etag) || $0 == "*" }) {
            return WebResponse(status: .notModified, contentType: file.contentType, body: [], headers: headers)
        }
        if request.method == .HEAD {
            return WebResponse(status: .ok, contentType: file.contentType, body: [], headers: headers, contentLength: file.body.count)
        }
        return WebResponse(status: .ok, contentType: file.contentType, body: file.body, headers: headers)
    }
}

extension WebResponse {
    /// Writes the response on an HTTP/1.1 channel (`Content-Length`, keep-alive or close).
    static func write(_ r: WebResponse, keepAlive: Bool, context: ChannelHandlerContext,
                      wrap: (HTTPServerResponsePart) -> NIOAny, beforeEnd: () -> Void = {}) {
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
