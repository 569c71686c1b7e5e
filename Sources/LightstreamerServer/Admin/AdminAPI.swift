import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The admin HTTP API (docs/ADMIN.md): `POST /admin/api/<action>` with a JSON body (at most
/// `maxBodyBytes`), answered with JSON. Access by `AdminAccess`; requests from a browser must
/// be same-origin JSON (an `Origin` matching `Host`, `Content-Type: application/json`), so a
/// page of another site cannot act with the administrator's cached credentials.
final class AdminAPI: Sendable {
    static let maxBodyBytes = 4096
    static let prefix = "/admin/api/"
    /// Dashboard tokens live this long and at most this many at once (the oldest go first).
    static let tokenLifetimeMillis: Int64 = 120_000
    static let maxTokens = 64

    let credentials: AdminCredentials?
    let actions: AdminActions
    private let tokens = NIOLockedValueBox<[(token: String, expires: Int64)]>([])

    init(credentials: AdminCredentials?, actions: AdminActions) {
        self.credentials = credentials
        self.actions = actions
    }

    /// nil when the dashboard may be shown to this request; otherwise the refusal.
    func viewRefusal(_ request: WebRequest) -> WebResponse? {
        refusal(
            AdminAccess.decide(
                .view, configured: credentials, authorization: request.headers.first(name: "Authorization"),
                clientIP: request.clientIP))
    }

    private func refusal(_ decision: AdminAccess.Decision) -> WebResponse? {
        switch decision {
        case .allowed: nil
        case .unauthorized: .text(.unauthorized, "Admin credentials needed\r\n", headers: [AdminAccess.challenge])
        case .forbidden:
            .text(
                .forbidden,
                credentials == nil
                    ? "No admin credentials are configured: the dashboard is read-only, for loopback clients only\r\n"
                    : "Forbidden\r\n")
        }
    }

    // MARK: - MONITOR credentials

    /// Whether a TLCP login to the `MONITOR` adapter set is the administrator's: the configured
    /// user with the password or a live dashboard token; with no credentials configured, any
    /// loopback client.
    func monitorLoginAllowed(user: String?, password: String?, clientIP: String?) -> Bool {
        guard let credentials else { return AdminAccess.isLoopback(clientIP) }
        guard let user, let password else { return false }
        if AdminAccess.matches(credentials, user: user, password: password) { return true }
        let now = monotonicMillis()
        let userOK = AdminAccess.constantTimeEqual(Array(credentials.user.utf8), Array(user.utf8))
        let tokenOK = tokens.withLockedValue { list in
            list.removeAll { $0.expires <= now }
            return list.contains { AdminAccess.constantTimeEqual(Array($0.token.utf8), Array(password.utf8)) }
        }
        return userOK && tokenOK
    }

    private func newToken() -> String {
        var rng = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in String(rng.next(), radix: 16) }.joined(separator: "-")
        let expires = monotonicMillis() + Self.tokenLifetimeMillis
        tokens.withLockedValue { list in
            list.removeAll { $0.expires <= expires - Self.tokenLifetimeMillis }
            list.append((token, expires))
            if list.count > Self.maxTokens { list.removeFirst(list.count - Self.maxTokens) }
        }
        return token
    }

    // MARK: - Requests

    func respond(_ request: WebRequest) -> WebReply {
        let action = String(request.path.dropFirst(Self.prefix.count))
        let routes: Set<String> = [
            "status", "dashboard-token", "sessions/block", "sessions/allow", "sessions/destroy",
            "items/clear-snapshot", "mpn/devices/delete", "mpn/apps/suspend", "mpn/apps/resume",
        ]
        guard routes.contains(action) else { return .now(Self.json(.notFound, ["error": "no such action"])) }
        let isView = action == "status" || action == "dashboard-token"
        let decision = AdminAccess.decide(
            isView ? .view : .act, configured: credentials,
            authorization: request.headers.first(name: "Authorization"), clientIP: request.clientIP)
        if let refused = refusal(decision) { return .now(refused) }
        if action == "status", request.method == .GET || request.method == .HEAD {
            return .now(Self.json(.ok, status()))
        }
        guard request.method == .POST else {
            return .now(Self.json(.methodNotAllowed, ["error": "use POST"], headers: [("Allow", "POST")]))
        }
        if let problem = Self.crossSiteProblem(request.headers) { return .now(Self.json(.forbidden, ["error": problem])) }
        guard request.body.readableBytes <= Self.maxBodyBytes else {
            return .now(Self.json(.payloadTooLarge, ["error": "body over \(Self.maxBodyBytes) bytes"]))
        }
        var body: [String: Any]? = [:]
        if request.body.readableBytes > 0 {
            body = (try? JSONSerialization.jsonObject(with: Data(request.body.readableBytesView))) as? [String: Any]
        }
        guard let body else { return .now(Self.json(.badRequest, ["error": "the body must be a JSON object"])) }
        return perform(action, body)
    }

    private func status() -> [String: Any] {
        [
            "sessionsBlocked": actions.newSessionsBlocked, "sessions": actions.manager.sessionCount,
            "credentialsConfigured": credentials != nil, "mpn": actions.mpn != nil,
        ]
    }

    private func perform(_ action: String, _ body: [String: Any]) -> WebReply {
        func string(_ key: String, max: Int = 256) -> String? {
            guard let s = body[key] as? String, !s.isEmpty, s.utf8.count <= max,
                !s.contains(where: { $0 == "\r" || $0 == "\n" })
            else { return nil }
            return s
        }
        func missing(_ what: String) -> WebReply { .now(Self.json(.badRequest, ["error": "\(what) missing or invalid"])) }
        switch action {
        case "dashboard-token":
            guard let credentials else { return .now(Self.json(.ok, [:])) }
            return .now(Self.json(.ok, ["user": credentials.user, "token": newToken()]))
        case "sessions/block", "sessions/allow":
            actions.newSessionsBlocked = action == "sessions/block"
            return .now(Self.json(.ok, status()))
        case "sessions/destroy":
            guard let id = string("session", max: 64) else { return missing("session") }
            var code = 32
            if let c = body["code"] {
                guard let n = c as? Int, AdminActions.isAllowedCauseCode(n) else {
                    return .now(Self.json(.badRequest, ["error": "code must be 32, 35, 41, 48 or from -9999 to 0"]))
                }
                code = n
            }
            var message = "Closed by the administrator"
            if body["message"] != nil {
                guard let m = string("message", max: 120), m.allSatisfy({ $0.isASCII && !$0.isNewline }) else {
                    return missing("message (one line of ASCII, at most 120 characters)")
                }
                message = m
            }
            return .now(
                actions.destroySession(id: id, code: code, message: message)
                    ? Self.json(.ok, ["destroyed": id, "code": code]) : Self.json(.notFound, ["error": "no such session"]))
        case "items/clear-snapshot":
            guard let set = string("adapterSet"), let item = string("item") else { return missing("adapterSet or item") }
            let adapter = string("dataAdapter") ?? AdapterSet.defaultDataAdapterName
            return .now(
                actions.clearSnapshot(adapterSet: set, dataAdapter: adapter, item: item)
                    ? Self.json(.ok, ["cleared": item]) : Self.json(.notFound, ["error": "the item is not subscribed"]))
        case "mpn/devices/delete":
            guard let hook = actions.mpn else { return .now(Self.json(.notFound, ["error": "MPN is not enabled"])) }
            guard let device = string("device", max: 128) else { return missing("device") }
            return .later {
                do {
                    return try await hook.deleteDevice(id: device)
                        ? Self.json(.ok, ["deleted": device])
                        : Self.json(.notFound, ["error": "no such device"])
                } catch {
                    return Self.json(.serviceUnavailable, ["error": "the MPN store failed"])
                }
            }
        default: // mpn/apps/suspend, mpn/apps/resume
            guard let hook = actions.mpn else { return .now(Self.json(.notFound, ["error": "MPN is not enabled"])) }
            guard let platform = string("platform", max: 16), let app = string("app") else { return missing("platform or app") }
            let suspend = action == "mpn/apps/suspend"
            return .later {
                do {
                    return try await hook.setApplicationSuspended(platform: platform, appId: app, suspended: suspend)
                        ? Self.json(.ok, ["app": app, "suspended": suspend]) : Self.json(.notFound, ["error": "no such application"])
                } catch {
                    return Self.json(.serviceUnavailable, ["error": "the MPN store failed"])
                }
            }
        }
    }

    /// Why a request may come from another site's page (nil when it may not): a JSON content
    /// type needs a CORS preflight, which this server never grants; an `Origin` must name the
    /// `Host` the request was sent to.
    static func crossSiteProblem(_ headers: HTTPHeaders) -> String? {
        let type = headers.first(name: "Content-Type")?.lowercased() ?? ""
        guard type.hasPrefix("application/json") else { return "Content-Type must be application/json" }
        if let origin = headers.first(name: "Origin") {
            guard let host = headers.first(name: "Host"),
                origin.lowercased() == "http://" + host.lowercased() || origin.lowercased() == "https://" + host.lowercased()
            else { return "cross-origin request refused" }
        }
        return nil
    }

    static func json(_ status: HTTPResponseStatus, _ object: [String: Any], headers: [(String, String)] = []) -> WebResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return WebResponse(
            status: status, contentType: "application/json", body: [UInt8](data) + [0x0A],
            headers: headers + [("Cache-Control", "no-store")])
    }
}
