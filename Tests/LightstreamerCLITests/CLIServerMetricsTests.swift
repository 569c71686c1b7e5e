import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built `lightstreamer-server` as an operator sees it: `/metrics` after known activity
/// (sessions, updates, an MPN notification through the log provider the demo server uses
/// without credentials), and `--log-format json` lines parsed back.
@Suite(.serialized) struct CLIServerMetricsTests {
    static func scrape(_ server: CLILiveServerTests.LiveServer) async throws -> [String: Double] {
        let url = try #require(URL(string: server.address + "/metrics"))
        let (data, _) = try await URLSession.shared.data(from: url)
        var out: [String: Double] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let v = Double(line[line.index(after: space)...]) else { continue }
            out[String(line[..<space])] = v
        }
        return out
    }

    @Test func metricsAfterSessionsUpdatesAndAnMPNNotification() async throws {
        let server = try await CLILiveServerTests.LiveServer.start(arguments: ["--log-format", "json", "--log-level", "info"])
        defer { Task { await server.stop() } }
        let sub = try await CLITests.run([
            "subscribe", "--server", server.address, "--items", "item1,item2", "--user", "carol",
            "--fields", "stock_name,last_price", "--count", "5", "--json", "--timeout", "20",
        ])
        #expect(sub.code == 0, "\(sub.stderr)")
        let token = (0..<16).map { _ in String(format: "%02x", Int.random(in: 0..<256)) }.joined()
        let device = [
            "--server", server.address, "--device-token", token, "--app-id", "com.example.metrics", "--platform", "Apple",
            "--json",
        ]
        let reg = try await CLITests.run(["mpn", "register"] + device)
        #expect(reg.code == 0, "\(reg.stderr)")
        let mpn = try await CLITests.run(
            ["mpn", "subscribe"] + device + [
                "--mode", "MERGE", "--items", "item1", "--fields", "stock_name,last_price", "--format", #"{"aps":{"alert":"x"}}"#,
                "--trigger", "Double.parseDouble(${last_price}) > 1.0",
            ])
        #expect(mpn.code == 0, "\(mpn.stderr)")
        let id = try #require(mpn.events.first?["id"] as? String)
        let deadline = Date().addingTimeInterval(15)
        while !server.notifications.contains(where: { $0["subscriptionId"] as? String == id }), Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }

        var m = try await Self.scrape(server)
        let delivered = #"lightstreamer_mpn_notifications_total{platform="Apple",app="com.example.metrics",outcome="delivered"}"#
        // The notification is counted once the provider answered.
        for _ in 0..<50 where m[delivered] == nil {
            try await Task.sleep(for: .milliseconds(100))
            m = try await Self.scrape(server)
        }
        #expect(m[delivered] == 1)
        #expect(m[#"lightstreamer_mpn_delivery_duration_seconds_count{platform="Apple",app="com.example.metrics"}"#] == 1)
        // One session per CLI run (subscribe, register, subscribe).
        #expect(m["lightstreamer_sessions_created_total"] == 3)
        #expect((m["lightstreamer_updates_sent_total"] ?? 0) >= 5)
        #expect(m[#"lightstreamer_request_duration_seconds_count{request="create_session",op=""}"#] == 3)
        #expect(m[#"lightstreamer_request_duration_seconds_count{request="control",op="register"}"#] == 2)
        #expect(m[#"lightstreamer_request_duration_seconds_count{request="control",op="activate"}"#] == 1)
        #expect((m["process_resident_memory_bytes"] ?? 0) > 0)
        #expect(m["lightstreamer_ready"] == 1)

        // JSON logs: every line an object; the subscribe session's lines carry its user and id.
        let lines = server.stderr.text.split(separator: "\n").filter { $0.hasPrefix("{") }
        let objects = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        let logs = objects.filter { $0["level"] is String && $0["message"] is String }
        #expect(!logs.isEmpty)
        let carol = logs.filter { ($0["metadata"] as? [String: Any])?["user"] as? String == "carol" }
        let ids = Set(carol.compactMap { ($0["metadata"] as? [String: Any])?["session"] as? String })
        #expect(ids.count == 1, "\(carol)")
        #expect(carol.contains { $0["message"] as? String == "session created" })
        #expect(carol.contains { $0["message"] as? String == "session closed" })
    }
}
