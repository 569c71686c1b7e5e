import NIOCore
import NIOHTTP1

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
        (
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:; frame-ancestors 'none'"
        ),
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
