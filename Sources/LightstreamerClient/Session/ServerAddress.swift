import TLCP

/// A parsed server address: `http[s]://host[:port][/prefix]`.
struct ServerAddress: Sendable, Equatable {
    enum Problem: Error, Equatable {
        case malformed
        case badScheme
        case hasQuery
    }

    var secure: Bool
    var host: String
    var port: Int
    /// Path prefix without a trailing slash, e.g. `/Prefix`, or empty.
    var prefix: String

    init(secure: Bool, host: String, port: Int, prefix: String) {
        self.secure = secure
        self.host = host
        self.port = port
        self.prefix = prefix
    }

    /// Parses an address as `ConnectionDetails.serverAddress` accepts it.
    static func parse(_ text: String) -> Result<ServerAddress, Problem> {
        guard let schemeEnd = text.range(of: "://") else { return .failure(.malformed) }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return .failure(.badScheme) }
        let rest = text[schemeEnd.upperBound...]
        if rest.contains("?") || rest.contains("#") { return .failure(.hasQuery) }
        let authority: Substring
        var path: Substring
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[slash...]
        } else {
            authority = rest
            path = ""
        }
        while path.hasSuffix("/") { path = path.dropLast() }
        guard let (host, port) = splitAuthority(authority, defaultPort: scheme == "https" ? 443 : 80) else {
            return .failure(.malformed)
        }
        if path.contains(" ") { return .failure(.malformed) }
        return .success(ServerAddress(secure: scheme == "https", host: host, port: port, prefix: String(path)))
    }

    /// `host`, `host:port`, `[v6]:port`. Nil when malformed.
    static func splitAuthority(_ a: Substring, defaultPort: Int) -> (String, Int)? {
        guard !a.isEmpty, !a.contains("@"), !a.contains(" ") else { return nil }
        if a.hasPrefix("[") {
            guard let close = a.firstIndex(of: "]") else { return nil }
            let host = String(a[a.index(after: a.startIndex)..<close])
            let after = a[a.index(after: close)...]
            if after.isEmpty { return host.isEmpty ? nil : (host, defaultPort) }
            guard after.hasPrefix(":"), let p = Int(after.dropFirst()), p > 0, p < 65536 else { return nil }
            return (host, p)
        }
        let parts = a.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return (String(parts[0]), defaultPort)
        case 2:
            guard !parts[0].isEmpty, let p = Int(parts[1]), p > 0, p < 65536 else { return nil }
            return (String(parts[0]), p)
        default: return nil
        }
    }

    /// Applies a CONOK control link (`host`, `host:port`, `host/prefix`), keeping the scheme.
    func applyingControlLink(_ link: String) -> ServerAddress? {
        guard link != "*", !link.isEmpty else { return nil }
        let authority: Substring
        var path: Substring = ""
        if let slash = link.firstIndex(of: "/") {
            authority = link[..<slash]
            path = link[slash...]
        } else {
            authority = Substring(link)
        }
        while path.hasSuffix("/") { path = path.dropLast() }
        guard let (host, port) = ServerAddress.splitAuthority(authority, defaultPort: secure ? 443 : 80) else { return nil }
        return ServerAddress(secure: secure, host: host, port: port, prefix: String(path))
    }

    private var hostPart: String {
        let h = host.contains(":") ? "[\(host)]" : host
        let defaultPort = secure ? 443 : 80
        return port == defaultPort ? h : "\(h):\(port)"
    }

    /// `http[s]://host[:port][/prefix]`
    var base: String { (secure ? "https://" : "http://") + hostPart + prefix }

    /// The WebSocket URL: `ws[s]://host[:port][/prefix]/lightstreamer`.
    var webSocketURL: String { (secure ? "wss://" : "ws://") + hostPart + prefix + "/lightstreamer" }

    /// The URL of an HTTP request.
    func httpURL(_ name: TLCPRequestName, session: String? = nil) -> String {
        (secure ? "https://" : "http://") + hostPart + TLCPRequestEncoder.httpTarget(name: name, prefix: prefix, session: session)
    }
}
