/// The parts of a `ws[s]://` or `http[s]://` URL a connection needs.
struct TransportURL: Sendable, Equatable {
    var secure: Bool
    var host: String
    var port: Int
    /// Path and query, e.g. `/lightstreamer/bind_session.txt?LS_protocol=TLCP-2.5.0`.
    var target: String

    init?(_ text: String) {
        guard let sep = text.range(of: "://") else { return nil }
        let scheme = text[..<sep.lowerBound].lowercased()
        switch scheme {
        case "http", "ws": secure = false
        case "https", "wss": secure = true
        default: return nil
        }
        let rest = text[sep.upperBound...]
        let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<slash]
        target = slash == rest.endIndex ? "/" : String(rest[slash...])
        if target.hasPrefix("?") { target = "/" + target }
        guard let (h, p) = ServerAddress.splitAuthority(authority, defaultPort: secure ? 443 : 80) else { return nil }
        host = h
        port = p
    }

    /// The Host header value.
    var hostHeader: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? h : "\(h):\(port)"
    }

    /// Whether the host is an IP literal (no SNI then).
    var hostIsIPAddress: Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
    }
}
