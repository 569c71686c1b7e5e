import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import LightstreamerServer

/// The pages' files and routes (`StaticSite`, `WebFront`), the admin access rules
/// (`AdminAccess`) and the `MONITOR` rows (`MonitorSampler`), without sockets.
@Suite struct WebFrontTests {
    static func request(
        _ path: String, method: HTTPMethod = .GET, headers: [(String, String)] = [],
        ip: String? = "127.0.0.1"
    ) -> WebRequest {
        WebRequest(method: method, path: Substring(path), headers: HTTPHeaders(headers), body: ByteBuffer(), clientIP: ip)
    }

    static func tempSite(_ files: [String: [UInt8]]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ls-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, bytes) in files { try Data(bytes).write(to: dir.appendingPathComponent(name)) }
        return dir
    }

    @Test func namesOutsideTheAllowedAlphabetAreRefused() {
        for bad in ["", "..", ".hidden", "a/b", "a\\b", "%2e%2e", "x?y", "é.js", String(repeating: "a", count: 65)] {
            #expect(!StaticSite.isValidName(bad), "\(bad)")
        }
        for good in ["index.html", "tlcp.js", "style-2.css", "a_b.png"] { #expect(StaticSite.isValidName(good)) }
    }

    @Test func loadKeepsOnlyServableFilesWithTheirTypes() throws {
        let dir = try Self.tempSite([
            "index.html": Array("<h1>hi</h1>".utf8), "app.js": Array("export {}".utf8), "style.css": Array("a{}".utf8),
            ".secret.js": [1], "notes.txt": [2], "big.js": [UInt8](repeating: 0x20, count: StaticSite.maxFileBytes + 1),
        ])
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub.js"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let site = StaticSite.load(directory: dir)
        #expect(Set(site.files.keys) == ["index.html", "app.js", "style.css"])
        #expect(site.files["app.js"]?.contentType == "text/javascript; charset=utf-8")
        #expect(site.files["style.css"]?.contentType == "text/css; charset=utf-8")
        #expect(site.files["index.html"]?.contentType == "text/html; charset=utf-8")
        #expect(StaticSite.load(directory: dir.appendingPathComponent("missing")).files.isEmpty)
    }

    @Test func anotherFolderCanBeNamed() throws {
        let dir = try Self.tempSite(["index.html": Array("<h1>mine</h1>".utf8)])
        defer { try? FileManager.default.removeItem(at: dir) }
        let found = try #require(StaticSite.defaultDirectory(environment: ["LS_WEB_ROOT": dir.path]))
        #expect(found.path == dir.path)
        #expect(StaticSite.load(directory: found).files["index.html"]?.body == Array("<h1>mine</h1>".utf8))
    }

    @Test func theBuiltPagesAreFound() throws {
        let dir = try #require(StaticSite.defaultDirectory(environment: [:]))
        let site = StaticSite.load(directory: dir)
        for name in ["index.html", "dashboard.html", "tlcp.js", "welcome.js", "dashboard.js", "plot.js", "style.css"] {
            #expect(site.files[name] != nil, "\(name) missing from \(dir.path)")
        }
    }

    static func front(admin: AdminCredentials? = nil) throws -> WebFront {
        let dir = try tempSite([
            "index.html": Array("<h1>welcome</h1>".utf8), "dashboard.html": Array("<h1>dash</h1>".utf8),
            "tlcp.js": Array("export {}".utf8),
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let manager = SessionManager(
            engine: ItemEngine(adapterSets: []), settings: SessionSettings(), metrics: ServerMetrics(),
            logger: .init(label: "test"))
        let api = AdminAPI(credentials: admin, actions: AdminActions(manager: manager, engine: manager.engine))
        return WebFront(site: StaticSite.load(directory: dir), admin: api)
    }

    static func response(_ reply: WebReply?) -> WebResponse? {
        guard case .now(let r)? = reply else { return nil }
        return r
    }

    @Test func routesFilesAndRefusesTraversal() throws {
        let web = try Self.front()
        let index = try #require(Self.response(web.respond(Self.request("/"))))
        #expect(index.status == .ok && String(decoding: index.body, as: UTF8.self) == "<h1>welcome</h1>")
        #expect(index.headers.contains { $0.0 == "Cache-Control" && $0.1 == "no-cache" })
        #expect(index.headers.contains { $0.0 == "X-Content-Type-Options" && $0.1 == "nosniff" })
        let js = try #require(Self.response(web.respond(Self.request("/web/tlcp.js"))))
        #expect(js.status == .ok && js.contentType.hasPrefix("text/javascript"))
        for bad in ["/web/../index.html", "/web/", "/web/.tlcp.js", "/web/nope.js", "/web/sub/tlcp.js", "/web/tlcp.js%00"] {
            #expect(Self.response(web.respond(Self.request(bad)))?.status == .notFound, "\(bad)")
        }
        // Paths the pages do not own go on to the TLCP handler.
        #expect(web.respond(Self.request("/lightstreamer/create_session.txt")) == nil)
        #expect(web.respond(Self.request("/index.html")) == nil)
        #expect(Self.response(web.respond(Self.request("/web/tlcp.js", method: .POST)))?.status == .methodNotAllowed)
        let head = try #require(Self.response(web.respond(Self.request("/", method: .HEAD))))
        #expect(head.status == .ok && head.body.isEmpty && head.contentLength == index.body.count)
    }

    @Test func etagRevalidationAnswers304() throws {
        let web = try Self.front()
        let first = try #require(Self.response(web.respond(Self.request("/web/tlcp.js"))))
        let etag = try #require(first.headers.first { $0.0 == "ETag" }?.1)
        let again = Self.response(web.respond(Self.request("/web/tlcp.js", headers: [("If-None-Match", etag)])))
        #expect(again?.status == .notModified && again?.body.isEmpty == true)
        let other = Self.response(web.respond(Self.request("/web/tlcp.js", headers: [("If-None-Match", "\"0\"")])))
        #expect(other?.status == .ok)
    }

    @Test func dashboardWithoutCredentialsIsForLoopbackOnly() throws {
        let web = try Self.front()
        #expect(Self.response(web.respond(Self.request("/dashboard", ip: "127.0.0.1")))?.status == .ok)
        #expect(Self.response(web.respond(Self.request("/dashboard", ip: "::1")))?.status == .ok)
        #expect(Self.response(web.respond(Self.request("/dashboard", ip: "10.1.2.3")))?.status == .forbidden)
        #expect(Self.response(web.respond(Self.request("/dashboard", ip: nil)))?.status == .forbidden)
    }

    @Test func dashboardWithCredentialsNeedsThem() throws {
        let web = try Self.front(admin: AdminCredentials(user: "root", password: "s3cret-pw"))
        let none = try #require(Self.response(web.respond(Self.request("/dashboard"))))
        #expect(none.status == .unauthorized)
        #expect(none.headers.contains { $0.0 == "WWW-Authenticate" && $0.1.hasPrefix("Basic realm=") })
        let wrong = "Basic " + Data("root:nope".utf8).base64EncodedString()
        #expect(Self.response(web.respond(Self.request("/dashboard", headers: [("Authorization", wrong)])))?.status == .unauthorized)
        let right = "Basic " + Data("root:s3cret-pw".utf8).base64EncodedString()
        // From anywhere, with the credentials.
        #expect(Self.response(web.respond(Self.request("/dashboard", headers: [("Authorization", right)], ip: "10.1.2.3")))?.status == .ok)
    }

    @Test func accessRules() {
        let admin = AdminCredentials(user: "u", password: "password1")
        let good = "Basic " + Data("u:password1".utf8).base64EncodedString()
        let colonInPassword = AdminCredentials(user: "u", password: "pass:word")
        #expect(AdminAccess.decide(.act, configured: nil, authorization: good, clientIP: "127.0.0.1") == .forbidden)
        #expect(AdminAccess.decide(.view, configured: nil, authorization: nil, clientIP: "127.0.0.1") == .allowed)
        #expect(AdminAccess.decide(.view, configured: nil, authorization: nil, clientIP: "192.168.1.1") == .forbidden)
        #expect(AdminAccess.decide(.act, configured: admin, authorization: good, clientIP: "192.168.1.1") == .allowed)
        #expect(AdminAccess.decide(.act, configured: admin, authorization: nil, clientIP: "127.0.0.1") == .unauthorized)
        #expect(AdminAccess.decide(.view, configured: admin, authorization: "Bearer x", clientIP: "127.0.0.1") == .unauthorized)
        #expect(AdminAccess.decide(.act, configured: admin, authorization: "Basic !!!", clientIP: nil) == .unauthorized)
        #expect(
            AdminAccess.decide(
                .act, configured: colonInPassword,
                authorization: "Basic " + Data("u:pass:word".utf8).base64EncodedString(), clientIP: nil) == .allowed)
        #expect(AdminAccess.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!AdminAccess.constantTimeEqual(Array("abc".utf8), Array("abd".utf8)))
        #expect(!AdminAccess.constantTimeEqual(Array("abc".utf8), Array("abc\0".utf8)))
        #expect(!AdminAccess.constantTimeEqual([], Array("a".utf8)))
        #expect(AdminAccess.basicCredentials("Basic " + String(repeating: "A", count: 2000)) == nil)
    }

    @Test func adminSectionOfTheConfiguration() throws {
        let ok = try ServerConfiguration.decode(Data(#"{ "demo": true, "admin": { "user": "ops", "password": "long-enough" } }"#.utf8))
        #expect(ok.admin == AdminCredentials(user: "ops", password: "long-enough"))
        #expect(ServerOptions(configuration: ok).admin?.user == "ops")
        for bad in [
            #"{ "demo": true, "admin": { "user": "ops", "password": "short" } }"#,
            #"{ "demo": true, "admin": { "user": "a:b", "password": "long-enough" } }"#,
            #"{ "demo": true, "admin": { "user": "ops" } }"#,
            #"{ "demo": true, "admin": { "user": "ops", "password": "long-enough", "extra": 1 } }"#,
        ] {
            #expect(throws: ConfigurationError.self) { try ServerConfiguration.decode(Data(bad.utf8)) }
        }
    }

    static func inputs(now: Int64, sent: Int, bytes: Int, received: Int, sessions: [SessionSummary] = []) -> MonitorInputs {
        var c = ServerMetrics.Snapshot()
        c.updatesSent = sent
        c.bytesSent = bytes
        c.sessionsActive = sessions.count
        return MonitorInputs(
            nowMillis: now, counters: c, updatesReceived: received, updatesFiltered: 7, items: 3, sessions: sessions,
            sessionsBlocked: false, mpn: nil)
    }

    @Test func serverRowRatesComeFromTheDifferenceBetweenSamples() {
        var sampler = MonitorSampler(startedAt: 0)
        let first = sampler.serverRow(Self.inputs(now: 1_000, sent: 100, bytes: 5_000, received: 40))
        #expect(first["updates_out_per_s"] == "0.0")
        let second = sampler.serverRow(Self.inputs(now: 3_000, sent: 300, bytes: 9_000, received: 50))
        #expect(second["updates_out_per_s"] == "100")
        #expect(second["bytes_out_per_s"] == "2000")
        #expect(second["updates_in_per_s"] == "5.0")
        #expect(second["items"] == "3")
        #expect(second["updates_filtered"] == "7")
        #expect(second["uptime_s"] == "3")
        #expect(second["mpn_devices"] == .some(nil))
        #expect(Set(second.keys) == Set(MonitorSampler.serverFields))
    }

    @Test func sessionRowsBecomeCommandEvents() {
        func session(_ id: String, transport: String, age: Int64) -> SessionSummary {
            SessionSummary(
                id: id, user: "u", address: "127.0.0.1", adapterSet: "DEMO", transport: transport, ageMillis: age,
                backlog: 0, subscriptions: 1)
        }
        let a = Self.inputs(
            now: 0, sent: 0, bytes: 0, received: 0,
            sessions: [session("S1", transport: "WS-STREAMING", age: 5_000), session("S2", transport: "UNBOUND", age: 1_000)])
        let rowsA = MonitorSampler.sessionRows(a)
        let added = MonitorSampler.commandEvents(old: [:], new: rowsA)
        #expect(added.map { $0["command"] } == ["ADD", "ADD"])
        #expect(added.first?["transport"] == "WS-STREAMING")
        let b = Self.inputs(
            now: 0, sent: 0, bytes: 0, received: 0,
            sessions: [session("S1", transport: "HTTP-POLLING", age: 6_000), session("S3", transport: "WS-STREAMING", age: 0)])
        let events = MonitorSampler.commandEvents(old: rowsA, new: MonitorSampler.sessionRows(b))
        #expect(events.map { "\($0["key"]! ?? "")=\($0["command"]! ?? "")" } == ["S1=UPDATE", "S3=ADD", "S2=DELETE"])
        #expect(MonitorSampler.commandEvents(old: rowsA, new: rowsA).isEmpty)
        var serverRow = MonitorSampler(startedAt: 0)
        let row = serverRow.serverRow(b)
        #expect(row["sessions_ws"] == "1" && row["sessions_http"] == "1" && row["sessions_unbound"] == "0")
    }
}
