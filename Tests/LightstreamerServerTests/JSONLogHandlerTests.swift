import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import Testing

@testable import LightstreamerServer

/// The JSON log handler's lines parsed back, and a session's log lines carrying its metadata.
@Suite struct JSONLogHandlerTests {
    final class Lines: Sendable {
        private let box = NIOLockedValueBox<[String]>([])
        func append(_ s: String) { box.withLockedValue { $0.append(s) } }
        var all: [String] { box.withLockedValue { $0 } }
        var objects: [[String: Any]] {
            all.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        }
    }

    @Test func linesParseBackWithEveryCharacterIntact() throws {
        let lines = Lines()
        var logger = Logger(label: "test.label") { JSONLogHandler(label: $0) { lines.append($0) } }
        logger.logLevel = .debug
        logger[metadataKey: "static"] = "s"
        let tricky = "quote \" backslash \\ newline \n tab \t bell \u{7} nul \u{0} esc \u{1B}[31m ñ 🚀 \u{2028}"
        logger.debug(
            "\(tricky)",
            metadata: [
                "value": "\(tricky)", "list": ["a", "b"], "nested": ["k": "v"],
                "number": .stringConvertible(42),
            ])
        logger.trace("below the level: not written")
        let raw = try #require(lines.all.first)
        #expect(lines.all.count == 1)
        // One line: the newline only at the end.
        #expect(raw.hasSuffix("\n"))
        #expect(!raw.dropLast().contains("\n"))
        #expect(!raw.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        let o = try #require(lines.objects.first)
        #expect(o["message"] as? String == tricky)
        #expect(o["level"] as? String == "debug")
        #expect(o["label"] as? String == "test.label")
        let metadata = try #require(o["metadata"] as? [String: Any])
        #expect(metadata["value"] as? String == tricky)
        #expect(metadata["static"] as? String == "s")
        #expect(metadata["list"] as? [String] == ["a", "b"])
        #expect((metadata["nested"] as? [String: String]) == ["k": "v"])
        #expect(metadata["number"] as? String == "42")
        // ISO 8601, UTC, milliseconds, close to now.
        let stamp = try #require(o["timestamp"] as? String)
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try #require(f.date(from: stamp), "\(stamp)")
        #expect(abs(date.timeIntervalSinceNow) < 60)
    }

    @Test func timestampsAreUTCWithMilliseconds() {
        #expect(JSONLogHandler.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(JSONLogHandler.iso8601(Date(timeIntervalSince1970: 1_795_992_601.5)) == "2026-11-29T22:50:01.500Z")
    }

    @Test func logFormatConfigurationKey() throws {
        let json = try ServerConfiguration.decode(Data(#"{"demo": true, "logFormat": "json"}"#.utf8))
        #expect(json.logFormat == "json")
        let none = try ServerConfiguration.decode(Data(#"{"demo": true}"#.utf8))
        #expect(none.logFormat == nil)
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.decode(Data(#"{"demo": true, "logFormat": "xml"}"#.utf8)) }
    }

    /// The JSON lines of one session's story (created by `alice`, one subscription, destroyed)
    /// on a server logging at `level`: the session's id, and the lines that carry it.
    private func sessionStory(level: Logger.Level) async throws -> (sessionId: String, lines: [[String: Any]], all: String) {
        let lines = Lines()
        var logger = Logger(label: "lightstreamer.server") { JSONLogHandler(label: $0) { lines.append($0) } }
        logger.logLevel = level
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.threads = 1
        let server = LightstreamerServer(options: options, adapterSets: [DemoAdapters.makeDemoAdapterSet()], logger: logger)
        try await server.start()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { Task { try? await group.shutdownGracefully() } }
        let ws = try await RawTestConnection.webSocket(port: try #require(server.port), group: group)
        #expect(await ws.waitFor("Sec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com"))
        try await ws.wsText("create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false&LS_user=alice")
        #expect(await ws.waitFor("CONOK,"))
        // (The text holds WebSocket framing: the id is what follows `CONOK,` up to the next comma.)
        let afterConok = try #require(ws.text.range(of: "CONOK,")).upperBound
        let sessionId = String(ws.text[afterConok...].prefix { $0 != "," })
        #expect(sessionId.hasPrefix("S"))
        try await ws.wsText("control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=counter&LS_schema=count&LS_snapshot=true")
        #expect(await ws.waitFor("SUBOK,1,"))
        try await ws.wsText("control\r\nLS_reqId=2&LS_op=destroy&LS_close_socket=true")
        #expect(await ws.waitFor("END,"))
        await waitUntil { server.sessionCount == 0 }
        await server.shutdown()
        let mine = lines.objects.filter { ($0["metadata"] as? [String: Any])?["session"] as? String == sessionId }
        return (sessionId, mine, "\(lines.all)")
    }

    /// Every line a session logs carries its id, user and transport.
    @Test func aSessionsLinesCarryItsMetadata() async throws {
        let story = try await sessionStory(level: .debug)
        let messages = story.lines.compactMap { $0["message"] as? String }
        #expect(messages.contains("session created"), "\(story.all)")
        #expect(messages.contains("subscribed"))
        #expect(messages.contains("session closed"))
        for o in story.lines {
            let m = o["metadata"] as? [String: Any]
            #expect(m?["user"] as? String == "alice")
            #expect((m?["transport"] as? String)?.isEmpty == false)
            #expect(m?["adapterSet"] as? String == "DEMO")
        }
    }

    /// At `info`, a session's `info` lines still carry its metadata, and its `debug` lines
    /// (whose metadata the session builds only for a level that logs them) are left out.
    @Test func aSessionsLinesFollowTheServersLevel() async throws {
        let story = try await sessionStory(level: .info)
        let messages = story.lines.compactMap { $0["message"] as? String }
        #expect(messages.contains("session created"), "\(story.all)")
        #expect(messages.contains("session closed"))
        #expect(!messages.contains("subscribed"))
        for o in story.lines {
            let m = o["metadata"] as? [String: Any]
            #expect(m?["user"] as? String == "alice")
            #expect(m?["adapterSet"] as? String == "DEMO")
        }
    }
}
