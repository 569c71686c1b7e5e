import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import Testing

@testable import LightstreamerServer

/// The pages and the admin API over real sockets: each action's effect on the server and its
/// clients, and the access rules on the main and the admin listener (docs/ADMIN.md).
@Suite(.timeLimit(.minutes(1))) struct AdminAPITests {
    static let admin = AdminCredentials(user: "admin", password: "correct horse")
    static var basic: String { "Basic " + Data("admin:correct horse".utf8).base64EncodedString() }

    static func withServer(
        admin: AdminCredentials? = AdminAPITests.admin, adminListener: Bool = false,
        _ body: (LightstreamerServer, MultiThreadedEventLoopGroup) async throws -> Void
    ) async throws {
        try await FrontIntegrationTests.withServer(
            configure: { o in
                o.admin = admin
                if adminListener { o.front.adminListener = (host: "127.0.0.1", port: 0) }
            }, body)
    }

    /// Sends one request and waits for the complete answer (`Content-Length` responses).
    static func call(
        _ port: Int, _ group: MultiThreadedEventLoopGroup, _ method: String, _ path: String, body: String = "",
        headers: [String] = []
    ) async throws -> (status: Int, text: String) {
        let c = try await RawTestConnection.connect(port: port, group: group)
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for h in headers { request += h + "\r\n" }
        request += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        try await c.send(request)
        await c.waitClosed(seconds: 10)
        let text = c.text
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        await c.close()
        return (status, text)
    }

    static func act(
        _ port: Int, _ group: MultiThreadedEventLoopGroup, _ action: String, _ json: String = "{}",
        auth: String? = basic, extra: [String] = []
    ) async throws -> (status: Int, text: String) {
        var headers = ["Content-Type: application/json"] + extra
        if let auth { headers.append("Authorization: \(auth)") }
        return try await call(port, group, "POST", "/admin/api/\(action)", body: json, headers: headers)
    }

    /// A WebSocket session on `set`; returns the connection and the session id.
    static func session(
        _ port: Int, _ group: MultiThreadedEventLoopGroup, set: String = "DEMO",
        credentials: String = ""
    ) async throws -> (RawTestConnection, String?) {
        let ws = try await RawTestConnection.webSocket(port: port, group: group)
        _ = await ws.waitFor(" 101 ")
        try await ws.wsText("create_session\r\nLS_adapter_set=\(set)&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false\(credentials)")
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !ws.text.contains("CONOK,"), !ws.text.contains("CONERR,") {
            try await Task.sleep(for: .milliseconds(10))
        }
        let sid = ws.text.components(separatedBy: "CONOK,").dropFirst().first?.split(separator: ",").first.map(String.init)
        return (ws, sid)
    }

    @Test func welcomePageAndScriptsAreServed() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let index = try await Self.call(port, group, "GET", "/")
            #expect(index.status == 200 && index.text.contains("text/html") && index.text.contains("web/welcome.js"))
            let js = try await Self.call(port, group, "GET", "/web/tlcp.js")
            #expect(js.status == 200 && js.text.contains("Content-Type: text/javascript"))
            #expect(try await Self.call(port, group, "GET", "/web/../Package.swift").status == 404)
            #expect(try await Self.call(port, group, "GET", "/web/%2e%2e/index.html").status == 404)
            #expect(try await Self.call(port, group, "GET", "/nothing").status == 404)
        }
    }

    @Test func withCredentialsEveryActionNeedsThem() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let none = try await Self.act(port, group, "sessions/block", auth: nil)
            #expect(none.status == 401 && none.text.contains("WWW-Authenticate: Basic"))
            let wrong = try await Self.act(port, group, "sessions/block", auth: "Basic " + Data("admin:wrong".utf8).base64EncodedString())
            #expect(wrong.status == 401)
            #expect(!server.admin.newSessionsBlocked)
            #expect(try await Self.call(port, group, "GET", "/dashboard").status == 401)
            #expect(try await Self.call(port, group, "GET", "/dashboard", headers: ["Authorization: \(Self.basic)"]).status == 200)
            // Not from another site's page, not as a form post.
            let crossSite = try await Self.act(port, group, "sessions/block", extra: ["Origin: http://evil.example"])
            #expect(crossSite.status == 403)
            let form = try await Self.call(
                port, group, "POST", "/admin/api/sessions/block", body: "a=b",
                headers: ["Authorization: \(Self.basic)", "Content-Type: application/x-www-form-urlencoded"])
            #expect(form.status == 403)
            let big = try await Self.act(port, group, "sessions/destroy", "{\"session\":\"" + String(repeating: "x", count: 5000) + "\"}")
            #expect(big.status == 413)
            #expect(try await Self.act(port, group, "nope").status == 404)
            #expect(
                try await Self.call(port, group, "GET", "/admin/api/sessions/block", headers: ["Authorization: \(Self.basic)"]).status
                    == 405)
            #expect(!server.admin.newSessionsBlocked)
        }
    }

    @Test func withoutCredentialsActionsAreRefusedAndTheDashboardIsLoopbackOnly() async throws {
        try await Self.withServer(admin: nil) { server, group in
            let port = try #require(server.port)
            #expect(try await Self.act(port, group, "sessions/block", auth: nil).status == 403)
            #expect(try await Self.act(port, group, "sessions/block").status == 403)
            #expect(!server.admin.newSessionsBlocked)
            #expect(try await Self.call(port, group, "GET", "/dashboard").status == 200)
            let status = try await Self.call(port, group, "GET", "/admin/api/status")
            #expect(status.status == 200 && status.text.contains("\"credentialsConfigured\":false"))
            // The MONITOR adapter set is open to loopback clients.
            let (ws, sid) = try await Self.session(port, group, set: "MONITOR")
            #expect(sid != nil, "\(ws.text)")
            await ws.close()
        }
    }

    @Test func blockAndAllowNewSessions() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let blocked = try await Self.act(port, group, "sessions/block")
            #expect(blocked.status == 200 && blocked.text.contains("\"sessionsBlocked\":true"))
            let (refused, sid) = try await Self.session(port, group)
            #expect(sid == nil)
            #expect(await refused.waitFor("CONERR,10,"), "\(refused.text)")
            // The monitor keeps working for the administrator.
            let (monitor, monitorSid) = try await Self.session(
                port, group, set: "MONITOR",
                credentials: "&LS_user=admin&LS_password=correct%20horse")
            #expect(monitorSid != nil, "\(monitor.text)")
            #expect(try await Self.act(port, group, "sessions/allow").status == 200)
            let (accepted, sid2) = try await Self.session(port, group)
            #expect(sid2 != nil, "\(accepted.text)")
            for c in [refused, monitor, accepted] { await c.close() }
        }
    }

    @Test func destroyEndsTheSessionWithTheGivenCode() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let (ws, sid) = try await Self.session(port, group)
            let id = try #require(sid)
            let bad = try await Self.act(port, group, "sessions/destroy", "{\"session\":\"\(id)\",\"code\":7}")
            #expect(bad.status == 400)
            let done = try await Self.act(
                port, group, "sessions/destroy", "{\"session\":\"\(id)\",\"code\":-42,\"message\":\"maintenance\"}")
            #expect(done.status == 200, "\(done.text)")
            #expect(await ws.waitFor("END,-42,maintenance"), "\(ws.text)")
            #expect(try await Self.act(port, group, "sessions/destroy", "{\"session\":\"\(id)\"}").status == 404)
            await ws.close()
        }
    }

    @Test func clearSnapshotSendsCSToSubscribers() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let (ws, sid) = try await Self.session(port, group)
            #expect(sid != nil)
            try await ws.wsText(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=DISTINCT&LS_group=chat_room&LS_schema=message&LS_snapshot=true")
            #expect(await ws.waitFor("EOS,1,1", seconds: 10), "\(ws.text)")
            let missing = try await Self.act(port, group, "items/clear-snapshot", #"{"adapterSet":"DEMO","item":"item5"}"#)
            #expect(missing.status == 404)
            let done = try await Self.act(port, group, "items/clear-snapshot", #"{"adapterSet":"DEMO","item":"chat_room"}"#)
            #expect(done.status == 200, "\(done.text)")
            #expect(await ws.waitFor("CS,1,1"), "\(ws.text)")
            await ws.close()
        }
    }

    @Test func monitorNeedsTheAdminOrATokenAndSendsFigures() async throws {
        try await Self.withServer { server, group in
            let port = try #require(server.port)
            let (anonymous, none) = try await Self.session(port, group, set: "MONITOR")
            #expect(none == nil)
            #expect(await anonymous.waitFor("CONERR,1,"))
            let token = try await Self.act(port, group, "dashboard-token")
            let value = try #require(token.text.components(separatedBy: "\"token\":\"").dropFirst().first?.split(separator: "\"").first)
            let (ws, sid) = try await Self.session(port, group, set: "MONITOR", credentials: "&LS_user=admin&LS_password=\(value)")
            #expect(sid != nil, "\(ws.text)")
            try await ws.wsText(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=server&LS_schema=sessions%20items&LS_snapshot=true")
            #expect(await ws.waitFor("U,1,1,", seconds: 10), "\(ws.text)")
            try await ws.wsText(
                "control\r\nLS_reqId=2&LS_op=add&LS_subId=2&LS_mode=COMMAND&LS_group=sessions&LS_schema=key%20command%20transport&LS_snapshot=true"
            )
            // Its own session is listed, as a WebSocket stream.
            #expect(await ws.waitFor("U,2,1,\(sid ?? "?")|ADD|WS-STREAMING", seconds: 10), "\(ws.text)")
            await ws.close()
            await anonymous.close()
        }
    }

    final class FakeMPN: MPNAdminHook {
        let calls = NIOLockedValueBox<[String]>([])
        func monitorFigures() async -> MPNMonitorFigures {
            MPNMonitorFigures(
                devices: 2, activeSubscriptions: 3, triggeredSubscriptions: 1,
                applications: [.init(platform: "Apple", appId: "com.example", sent: 5, failed: 1, suspended: false)])
        }
        func deleteDevice(id: String) async throws -> Bool {
            calls.withLockedValue { $0.append("delete \(id)") }
            return id == "dev-1"
        }
        func setApplicationSuspended(platform: String, appId: String, suspended: Bool) async throws -> Bool {
            calls.withLockedValue { $0.append("\(suspended ? "suspend" : "resume") \(platform) \(appId)") }
            return appId == "com.example"
        }
    }

    @Test func mpnActionsGoThroughTheHookOnTheAdminListener() async throws {
        try await Self.withServer(adminListener: true) { server, group in
            let adminPort = try #require(server.adminPort)
            #expect(try await Self.act(adminPort, group, "mpn/devices/delete", #"{"device":"dev-1"}"#).status == 404)
            let hook = FakeMPN()
            server.setMPNAdminHook(hook)
            #expect(try await Self.act(adminPort, group, "mpn/devices/delete", #"{"device":"dev-1"}"#, auth: nil).status == 401)
            #expect(try await Self.act(adminPort, group, "mpn/devices/delete", #"{"device":"dev-1"}"#).status == 200)
            #expect(try await Self.act(adminPort, group, "mpn/devices/delete", #"{"device":"dev-2"}"#).status == 404)
            #expect(try await Self.act(adminPort, group, "mpn/apps/suspend", #"{"platform":"Apple","app":"com.example"}"#).status == 200)
            #expect(try await Self.act(adminPort, group, "mpn/apps/resume", #"{"platform":"Apple","app":"com.example"}"#).status == 200)
            #expect(try await Self.act(adminPort, group, "mpn/apps/resume", #"{"platform":"Apple"}"#).status == 400)
            #expect(
                hook.calls.withLockedValue { $0 } == [
                    "delete dev-1", "delete dev-2", "suspend Apple com.example",
                    "resume Apple com.example",
                ])
            // The admin listener serves the API, not the pages.
            #expect(try await Self.call(adminPort, group, "GET", "/dashboard").status == 404)
            // MPN figures reach the monitor.
            let port = try #require(server.port)
            let (ws, sid) = try await Self.session(port, group, set: "MONITOR", credentials: "&LS_user=admin&LS_password=correct%20horse")
            #expect(sid != nil)
            try await ws.wsText(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=server&LS_schema=mpn_devices%20mpn_active%20mpn_triggered&LS_snapshot=true"
            )
            #expect(await ws.waitFor("U,1,1,2|3|1", seconds: 10), "\(ws.text)")
            try await ws.wsText(
                "control\r\nLS_reqId=2&LS_op=add&LS_subId=2&LS_mode=COMMAND&LS_group=mpn_apps&LS_schema=key%20command%20sent%20failed&LS_snapshot=true"
            )
            #expect(await ws.waitFor("U,2,1,Apple/com.example|ADD|5|1", seconds: 10), "\(ws.text)")
            await ws.close()
        }
    }
}
