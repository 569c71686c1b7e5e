import NIOHTTP1
import Testing

@testable import LightstreamerServer

/// `HeaderTokens`: the comma-separated tokens of header fields, as `HTTPHeaders[canonicalForm:]`
/// reads them (every field of the name, in order, trimmed, empty ones left out), compared in
/// any ASCII case.
@Suite struct HeaderTokensTests {
    private let headers = HTTPHeaders([
        ("Host", "127.0.0.1"),
        ("connection", " keep-alive ,\tUpgrade"),
        ("Sec-WebSocket-Protocol", "TLCP-2.5.0.lightstreamer.com, ,x"),
        ("SEC-WEBSOCKET-PROTOCOL", "\tTLCP-2.4.0.lightstreamer.com\t"),
        ("Empty", ""),
    ])

    @Test func tokensOfEveryFieldOfTheNameInOrderTrimmedWithoutEmptyOnes() {
        #expect(
            HeaderTokens.list(headers, named: "sec-websocket-protocol") == [
                "TLCP-2.5.0.lightstreamer.com", "x", "TLCP-2.4.0.lightstreamer.com",
            ])
        #expect(HeaderTokens.list(headers, named: "Connection") == ["keep-alive", "Upgrade"])
        #expect(HeaderTokens.list(headers, named: "Empty").isEmpty)
        #expect(HeaderTokens.list(headers, named: "Missing").isEmpty)
        // NIO's canonical form of the fields, without its empty tokens.
        #expect(
            HeaderTokens.list(headers, named: "Sec-WebSocket-Protocol")
                == headers[canonicalForm: "Sec-WebSocket-Protocol"].map(String.init).filter { !$0.isEmpty })
    }

    @Test func aTokenIsFoundWholeInAnyCase() {
        #expect(HeaderTokens.contains(headers, named: "Connection", token: "upgrade"))
        #expect(HeaderTokens.contains(headers, named: "CONNECTION", token: "KEEP-ALIVE"))
        #expect(!HeaderTokens.contains(headers, named: "Connection", token: "upgraded"))
        #expect(!HeaderTokens.contains(headers, named: "Connection", token: "grade"))
        #expect(!HeaderTokens.contains(headers, named: "Host", token: "upgrade"))
        let unrelated = HTTPHeaders([("Connection", "Upgrade2, close")])
        #expect(!HeaderTokens.contains(unrelated, named: "Connection", token: "upgrade"))
    }

    @Test func lettersOnlyMatchAcrossCase() {
        #expect(HeaderTokens.equalsIgnoringASCIICase("Upgrade", "uPGRADE"))
        // '@' and '`' differ only in the bit that separates cases in letters.
        #expect(!HeaderTokens.equalsIgnoringASCIICase("a@", "a`"))
        #expect(!HeaderTokens.equalsIgnoringASCIICase("ab", "abc"))
    }
}
