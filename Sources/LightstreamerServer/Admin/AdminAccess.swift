import Foundation

/// The administrator's credentials (`admin.user`, `admin.password` in docs/CONFIG.md).
public struct AdminCredentials: Sendable, Equatable {
    /// The administrator's user name (1 to 256 bytes, no `:` or line break).
    public var user: String
    /// The administrator's password (8 to 256 characters).
    public var password: String

    /// Credentials as given (the configuration file checks their lengths when it decodes them).
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}

/// Who may see the dashboard (and the `MONITOR` adapter set) and who may act (docs/ADMIN.md):
/// with credentials configured, whoever presents them, from anywhere; with none, viewing is
/// for loopback clients only and every action is refused. No I/O: callers pass the request's
/// `Authorization` header and address.
enum AdminAccess {
    enum Decision: Equatable {
        case allowed
        /// 401: credentials missing or wrong (answered with `WWW-Authenticate`).
        case unauthorized
        /// 403: not allowed whatever the credentials.
        case forbidden
    }

    enum Need { case view, act }

    static func decide(_ need: Need, configured: AdminCredentials?, authorization: String?, clientIP: String?) -> Decision {
        guard let configured else {
            return need == .view && isLoopback(clientIP) ? .allowed : .forbidden
        }
        guard let (user, password) = authorization.flatMap(basicCredentials) else { return .unauthorized }
        return matches(configured, user: user, password: password) ? .allowed : .unauthorized
    }

    /// Both compared in constant time (for strings of a given length), the password always.
    static func matches(_ configured: AdminCredentials, user: String, password: String) -> Bool {
        let userOK = constantTimeEqual(Array(configured.user.utf8), Array(user.utf8))
        let passwordOK = constantTimeEqual(Array(configured.password.utf8), Array(password.utf8))
        return userOK && passwordOK
    }

    /// Compares every byte of the longer input whatever the first difference, so the time
    /// depends on the lengths only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt64(truncatingIfNeeded: a.count ^ b.count)
        let n = max(a.count, b.count)
        var i = 0
        while i < n {
            let x = i < a.count ? a[i] : 0
            let y = i < b.count ? b[i] : 0
            diff |= UInt64(x ^ y)
            i += 1
        }
        return diff == 0
    }

    /// `Basic <base64(user:password)>` (RFC 7617), at most 1 KB; nil when malformed.
    static func basicCredentials(_ header: String) -> (String, String)? {
        guard header.utf8.count <= 1024 else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    static func isLoopback(_ ip: String?) -> Bool {
        guard let ip else { return false }
        return ip.hasPrefix("127.") || ip == "::1" || ip.hasPrefix("::ffff:127.")
    }

    static let challenge = ("WWW-Authenticate", "Basic realm=\"Lightstreamer admin\", charset=\"UTF-8\"")
}
