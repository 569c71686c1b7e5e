import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cookies shared by all clients, kept in `HTTPCookieStorage.shared` as in the official
/// client: sent with every request and WebSocket upgrade, updated from `Set-Cookie`.
enum CookieJar {
    static func add(_ cookies: [HTTPCookie], for url: URL) {
        HTTPCookieStorage.shared.setCookies(cookies, for: url, mainDocumentURL: nil)
    }

    static func cookies(for url: URL?) -> [HTTPCookie]? {
        guard let url else { return HTTPCookieStorage.shared.cookies }
        return HTTPCookieStorage.shared.cookies(for: url)
    }

    /// The `Cookie` header for a request URL (ws/wss are treated as http/https).
    static func header(for urlText: String) -> String? {
        guard let url = httpURL(urlText), let cookies = HTTPCookieStorage.shared.cookies(for: url), !cookies.isEmpty else {
            return nil
        }
        return cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Stores the `Set-Cookie` headers of a response.
    static func store(setCookieHeaders: [String], for urlText: String) {
        guard !setCookieHeaders.isEmpty, let url = httpURL(urlText) else { return }
        var cookies: [HTTPCookie] = []
        for h in setCookieHeaders {
            cookies.append(contentsOf: HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": h], for: url))
        }
        if !cookies.isEmpty { HTTPCookieStorage.shared.setCookies(cookies, for: url, mainDocumentURL: nil) }
    }

    private static func httpURL(_ text: String) -> URL? {
        var t = text
        if t.hasPrefix("ws://") { t = "http://" + t.dropFirst(5) } else if t.hasPrefix("wss://") { t = "https://" + t.dropFirst(6) }
        return URL(string: t)
    }
}
