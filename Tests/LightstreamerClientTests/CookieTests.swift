import Foundation
import Testing

@testable import LightstreamerClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cookies are shared through `HTTPCookieStorage.shared`, sent on requests and WS upgrades.
@Suite struct CookieTests {
    @Test func addedCookiesGoOutOnRequestsAndUpgrades() throws {
        let url = try #require(URL(string: "http://cookies.example:8080/"))
        let cookie = try #require(HTTPCookie(properties: [.name: "route", .value: "node7", .domain: "cookies.example", .path: "/"]))
        LightstreamerClient.addCookies([cookie], forURL: url)
        #expect(LightstreamerClient.getCookiesForURL(url)?.contains { $0.name == "route" } == true)
        #expect(CookieJar.header(for: "http://cookies.example:8080/lightstreamer/create_session.txt")?.contains("route=node7") == true)
        #expect(CookieJar.header(for: "ws://cookies.example:8080/lightstreamer")?.contains("route=node7") == true)
    }

    @Test func setCookieHeadersAreStored() {
        CookieJar.store(setCookieHeaders: ["session=abc; Path=/"], for: "https://store.example/lightstreamer/bind_session.txt")
        #expect(CookieJar.header(for: "wss://store.example/lightstreamer")?.contains("session=abc") == true)
    }
}
