import NIOConcurrencyHelpers
import NIOHTTP1
import NIOPosix
import Testing

@testable import LightstreamerServer

/// The headers of a WebSocket upgrade as the Metadata Adapter gets them (`UpgradeHeaders`).
@Suite struct UpgradeHeadersTests {
    @Test func lowercasedNamesLastValueWinsEmptyValuesKept() {
        let headers = HTTPHeaders([
            ("Host", "example.com"), ("X-Trace", "a"), ("x-trace", "b"), ("X-Empty", ""),
            ("Sec-WebSocket-Protocol", "TLCP-2.5.0.lightstreamer.com"),
        ])
        #expect(
            UpgradeHeaders(headers).dictionary == [
                "host": "example.com", "x-trace": "b", "x-empty": "",
                "sec-websocket-protocol": "TLCP-2.5.0.lightstreamer.com",
            ])
    }

    @Test func headersWithNULAreLeftOutAndTheOthersStayPaired() {
        let headers = HTTPHeaders([("A", "1"), ("B", "x\u{0}y"), ("C\u{0}", "2"), ("D", "3")])
        #expect(UpgradeHeaders(headers).dictionary == ["a": "1", "d": "3"])
        #expect(UpgradeHeaders(HTTPHeaders()).dictionary.isEmpty)
    }

    /// Remembers the headers of every `notifyUser`.
    final class RecordingMetadata: MetadataAdapter {
        let seen = NIOLockedValueBox<[[String: String]]>([])
        let literal = LiteralBasedMetadataAdapter()
        let readsHTTPHeaders: Bool
        init(readsHTTPHeaders: Bool = true) { self.readsHTTPHeaders = readsHTTPHeaders }
        func notifyUser(user: String?, password: String?, headers: [String: String], clientIP: String?) async throws {
            seen.withLockedValue { $0.append(headers) }
        }
        func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
            try await literal.items(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter)
        }
        func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
            try await literal.fields(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter, schema: schema)
        }
    }

    /// What `notifyUser` of `metadata` (set REC) gets for a create over a WebSocket, on a server
    /// with the `others` sets as well.
    private func headersOverAWebSocket(
        _ metadata: RecordingMetadata, besides others: [AdapterSet] = []
    ) async throws
        -> [[String: String]]
    {
        let set = AdapterSet(name: "REC", metadata: metadata, dataAdapters: [:])
        try await FrontIntegrationTests.withServer(adapterSets: [set] + others) { server, group in
            let port = try #require(server.port)
            let ws = try await RawTestConnection.webSocket(port: port, group: group)
            #expect(await ws.waitFor("HTTP/1.1 101"))
            try await ws.wsText("wsok")
            try await ws.wsText("create_session\r\nLS_adapter_set=REC&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false")
            #expect(await ws.waitFor("CONOK,", seconds: 10), "received: \(ws.text)")
            await ws.close()
        }
        return metadata.seen.withLockedValue { $0 }
    }

    /// The headers are kept only if some adapter set's Metadata Adapter reads them: one that
    /// says it does not gets none, unless another set's adapter reads them.
    @Test func headersAreKeptOnlyWhenSomeMetadataAdapterReadsThem() async throws {
        let quiet = try await headersOverAWebSocket(RecordingMetadata(readsHTTPHeaders: false))
        #expect(quiet == [[:]])
        let reader = AdapterSet(name: "READER", metadata: RecordingMetadata(), dataAdapters: [:])
        let beside = try await headersOverAWebSocket(RecordingMetadata(readsHTTPHeaders: false), besides: [reader])
        #expect(beside.first?["sec-websocket-version"] == "13")
        let literal = AdapterSet(name: "LIT", dataAdapters: [:])
        #expect(!ItemEngine(adapterSets: [literal]).readsHTTPHeaders)
        #expect(ItemEngine(adapterSets: [literal, reader]).readsHTTPHeaders)
    }

    @Test func aCreateOverAWebSocketHandsTheUpgradeHeadersToNotifyUser() async throws {
        let seen = try await headersOverAWebSocket(RecordingMetadata())
        #expect(seen.count == 1)
        #expect(seen.first?["host"] == "127.0.0.1")
        #expect(seen.first?["sec-websocket-version"] == "13")
        #expect(seen.first?["sec-websocket-protocol"] == "TLCP-2.5.0.lightstreamer.com")
    }
}
