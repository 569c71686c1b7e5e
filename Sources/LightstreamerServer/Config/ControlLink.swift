/// The control link a node sends as the fourth argument of CONOK: `*` (keep using the address
/// the stream came in on) or `host[:port][/prefix]`, where clients send their later binds and
/// every request that needs a new connection. Clients keep their own scheme and add
/// `/lightstreamer` after the prefix, so `push-a.example.com:8443/ls` sends a client that came
/// in on `https://…` to `https://push-a.example.com:8443/ls/lightstreamer`. A link without a
/// port means the scheme's default port (80 or 443), not the port the client first used.
///
/// `validated` accepts only what every client parses the same way (docs/CLUSTER.md, "Control
/// link"): a DNS name, an IPv4 address or a bracketed IPv6 address, an optional port from 1 to
/// 65535, and an optional prefix made of non-empty path segments of unreserved URL characters.
/// Trailing slashes are dropped. Nothing that CONOK would have to percent-encode is accepted.
public enum ControlLink {
    /// The link meaning "no other address".
    public static let unchanged = "*"
    /// Longest accepted link, in bytes.
    public static let maxLength = 512

    /// A link that cannot be used, and why.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        /// The link as given.
        public var value: String
        /// Why it was refused.
        public var reason: String
        /// The link and the reason.
        public var description: String { "invalid control link \"\(value)\": \(reason)" }
    }

    /// The link as CONOK will carry it (trailing slashes dropped), or why it cannot be used.
    public static func validated(_ text: String) throws(Invalid) -> String {
        func fail(_ reason: String) -> Invalid { Invalid(value: String(text.prefix(maxLength)), reason: reason) }
        if text == unchanged { return text }
        guard !text.isEmpty else { throw fail("empty (use \"*\" for the address the client connected to)") }
        guard text.utf8.count <= maxLength else { throw fail("longer than \(maxLength) bytes") }
        if text.contains("://") { throw fail("give host[:port][/prefix] without a scheme: clients keep the scheme they used") }
        if let bad = text.unicodeScalars.first(where: { !$0.isASCII || $0.value <= 0x20 || $0.value == 0x7F }) {
            throw fail("character U+\(String(bad.value, radix: 16, uppercase: true)) is not allowed")
        }
        for c in ["?", "#", ",", "%", "@", "\\"] where text.contains(c) {
            throw fail("'\(c)' is not allowed (expected host[:port][/prefix])")
        }
        let authority: Substring
        var prefix: Substring
        if let slash = text.firstIndex(of: "/") {
            authority = text[..<slash]
            prefix = text[slash...]
        } else {
            authority = Substring(text)
            prefix = ""
        }
        while prefix.hasSuffix("/") { prefix = prefix.dropLast() }
        if let reason = authorityProblem(authority) { throw fail(reason) }
        if let reason = prefixProblem(prefix) { throw fail(reason) }
        return String(authority) + String(prefix)
    }

    private static func authorityProblem(_ a: Substring) -> String? {
        guard !a.isEmpty else { return "no host before the prefix" }
        let host: Substring
        let port: Substring?
        if a.hasPrefix("[") {
            guard let close = a.firstIndex(of: "]") else { return "IPv6 address without ']'" }
            host = a[a.index(after: a.startIndex)..<close]
            let rest = a[a.index(after: close)...]
            if rest.isEmpty {
                port = nil
            } else if rest.hasPrefix(":") {
                port = rest.dropFirst()
            } else {
                return "unexpected text after the IPv6 address"
            }
            guard !host.isEmpty, host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                return "'\(host)' is not an IPv6 address"
            }
        } else {
            let parts = a.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return "an IPv6 address must be written in brackets, e.g. [::1]:8080" }
            host = parts[0]
            port = parts.count == 2 ? parts[1] : nil
            if let reason = hostNameProblem(host) { return reason }
        }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }),
                let n = Int(port), (1...65_535).contains(n)
            else { return "port '\(port)' is not a number from 1 to 65535" }
        }
        return nil
    }

    /// A DNS name or an IPv4 address: dot-separated labels of letters, digits and '-', none
    /// empty, none starting or ending with '-', at most 253 bytes.
    private static func hostNameProblem(_ host: Substring) -> String? {
        guard !host.isEmpty else { return "no host" }
        guard host.utf8.count <= 253 else { return "host name longer than 253 bytes" }
        for label in host.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty, label.count <= 63,
                label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }),
                label.first != "-", label.last != "-"
            else { return "'\(host)' is not a host name or IPv4 address" }
        }
        return nil
    }

    /// Empty, or `/segment[/segment…]` with unreserved characters (letters, digits, `-._~`);
    /// the last segment may not be `lightstreamer`, which clients add themselves.
    private static func prefixProblem(_ prefix: Substring) -> String? {
        guard !prefix.isEmpty else { return nil }
        let segments = prefix.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for s in segments {
            guard !s.isEmpty else { return "empty segment in the prefix '\(prefix)'" }
            guard s != "." && s != ".." else { return "'.' and '..' are not allowed in the prefix" }
            guard s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) }) else {
                return "the prefix '\(prefix)' may hold only letters, digits and -._~ between slashes"
            }
        }
        if segments.last == "lightstreamer" {
            return "leave '/lightstreamer' out of the prefix: clients add it themselves"
        }
        return nil
    }
}
