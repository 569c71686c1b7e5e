import Foundation
import Logging
import Metrics
import MetricsTestKit
import NIOPosix
import Prometheus
import Testing

@testable import LightstreamerServer

/// `/metrics` through swift-metrics and swift-prometheus: scraped after known activity, each
/// server with a registry of its own; and an injected (non-Prometheus) factory.
@Suite struct MetricsExpositionTests {
    /// Series of a Prometheus text exposition: `name{labels}` → value.
    static func parse(_ text: String) -> [String: Double] {
        var out: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let v = Double(line[line.index(after: space)...]) else { continue }
            out[String(line[..<space])] = v
        }
        return out
    }

    static func scrape(port: Int, group: MultiThreadedEventLoopGroup) async throws -> String {
        let c = try await RawTestConnection.connect(port: port, group: group)
        try await c.send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        // The whole response: `Connection: close` ends it.
        #expect(await c.waitClosed(seconds: 10))
        let text = c.text
        await c.close()
        return text
    }

    static func session(port: Int, group: MultiThreadedEventLoopGroup) async throws -> RawTestConnection {
        let ws = try await RawTestConnection.webSocket(port: port, group: group)
        #expect(await ws.waitFor("Sec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com"))
        try await ws.wsText("create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false")
        #expect(await ws.waitFor("CONOK,"))
        return ws
    }

    @Test func scrapeAfterSessionsSubscriptionsAndUpdates() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let port = try #require(server.port)
            let a = try await Self.session(port: port, group: group)
            let b = try await Self.session(port: port, group: group)
            try await a.wsText("control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=counter&LS_schema=count&LS_snapshot=true")
            #expect(await a.waitFor("U,1,1,", seconds: 20))
            // At least a few updates written.
            await waitUntil { server.metrics.snapshot.updatesSent >= 5 }
            try await b.wsText("bogus\r\nx=y")
            #expect(await b.waitFor("ERROR,67,"))

            let text = try await Self.scrape(port: port, group: group)
            let m = Self.parse(text)
            let snapshot = server.metrics.snapshot
            #expect(m["lightstreamer_sessions_created_total"] == 2, "\(text)")
            #expect(m["lightstreamer_sessions_active"] == 2)
            #expect(m["lightstreamer_subscriptions_active"] == 1)
            // The counters agree with the dashboard's snapshot (taken right after the scrape;
            // updates go on meanwhile, so no more than the snapshot and at least 5).
            let sent = try #require(m["lightstreamer_updates_sent_total"])
            #expect(sent >= 5 && sent <= Double(snapshot.updatesSent))
            #expect((m["lightstreamer_bytes_sent_total"] ?? 0) > sent)
            #expect(m["lightstreamer_request_errors_total"] == 1)
            #expect(m["lightstreamer_connections_open"] ?? 0 >= 2)
            #expect(text.contains("# TYPE lightstreamer_updates_sent_total counter"))
            #expect(text.contains("# TYPE lightstreamer_sessions_active gauge"))
            // Request latency by request name and control operation.
            #expect(text.contains("# TYPE lightstreamer_request_duration_seconds histogram"))
            #expect(m[#"lightstreamer_request_duration_seconds_count{request="create_session",op=""}"#] == 2, "\(text)")
            #expect(m[#"lightstreamer_request_duration_seconds_count{request="control",op="add"}"#] == 1)
            #expect(m[#"lightstreamer_request_duration_seconds_bucket{request="create_session",op="",le="+Inf"}"#] == 2)
            // Process figures.
            #expect((m["process_resident_memory_bytes"] ?? 0) > 1_000_000)
            #expect((m["process_open_fds"] ?? 0) >= 3)
            #expect((m["process_cpu_seconds_total"] ?? 0) > 0)
            let start = try #require(m["process_start_time_seconds"])
            #expect(start <= Date().timeIntervalSince1970 && start > Date().timeIntervalSince1970 - 86_400 * 30)
            await a.close()
            await b.close()
        }
    }

    /// Two servers in one process: each exports its own figures.
    @Test func eachServerHasItsOwnRegistry() async throws {
        try await FrontIntegrationTests.withServer { first, group in
            try await FrontIntegrationTests.withServer { second, _ in
                let s = try await Self.session(port: try #require(first.port), group: group)
                let firstText = try await Self.scrape(port: try #require(first.port), group: group)
                let secondText = try await Self.scrape(port: try #require(second.port), group: group)
                #expect(Self.parse(firstText)["lightstreamer_sessions_created_total"] == 1)
                #expect(Self.parse(secondText)["lightstreamer_sessions_created_total"] == 0)
                await s.close()
            }
        }
    }

    /// An embedder's factory (here swift-metrics' test kit) gets the server's metrics; the
    /// server does not touch the global `MetricsSystem`; `/metrics` keeps the node lines only.
    @Test func injectedFactoryReceivesTheMetrics() async throws {
        let factory = TestMetrics()
        try await FrontIntegrationTests.withServer(configure: { $0.metrics = .custom(factory) }) { server, group in
            let port = try #require(server.port)
            let s = try await Self.session(port: port, group: group)
            await waitUntil { server.sessionCount >= 1 }
            let created = try factory.expectCounter("lightstreamer_sessions_created_total")
            #expect(created.totalValue == 1)
            let active = try factory.expectGauge("lightstreamer_sessions_active")
            #expect(active.lastValue == 1)
            // The duration is recorded once the create returns, just after its CONOK was written:
            // wait for it (bounded), as for the session count above.
            let labels = [("request", "create_session"), ("op", "")]
            await waitUntil { !((try? factory.expectTimer("lightstreamer_request_duration_seconds", labels))?.values.isEmpty ?? true) }
            let timer = try factory.expectTimer("lightstreamer_request_duration_seconds", labels)
            #expect(timer.values.count == 1)
            let text = try await Self.scrape(port: port, group: group)
            #expect(!text.contains("lightstreamer_sessions_created_total"))
            await s.close()
        }
    }

    /// Remote adapter counters read at scrape time are counters that only grow.
    @Test func handlesReportDeltas() {
        let factory = TestMetrics()
        let metrics = ServerMetrics(backend: .custom(factory))
        metrics.update {
            $0.sessionsCreated += 3
            $0.sessionsActive += 3
        }
        metrics.update { $0.sessionsActive -= 1 }
        metrics.sent(bytes: 100, updates: 4)
        metrics.sent(bytes: 50, updates: 0)
        #expect((try? factory.expectCounter("lightstreamer_sessions_created_total").totalValue) == 3)
        #expect((try? factory.expectGauge("lightstreamer_sessions_active").lastValue) == 2)
        #expect((try? factory.expectCounter("lightstreamer_bytes_sent_total").totalValue) == 150)
        #expect((try? factory.expectCounter("lightstreamer_updates_sent_total").totalValue) == 4)
        #expect(metrics.snapshot.updatesSent == 4)
    }
}

@Suite struct MetricsOrderTests {
    @Test func familiesComeInNameOrderWithTheirSeries() {
        let text = "# TYPE b counter\nb 1\n# TYPE a gauge\na{x=\"1\"} 2.0\na{x=\"2\"} 3.0\n# HELP c help\n# TYPE c counter\nc 0\n"
        #expect(
            ServerMetrics.sortedFamilies(text)
                == "# TYPE a gauge\na{x=\"1\"} 2.0\na{x=\"2\"} 3.0\n# TYPE b counter\nb 1\n# HELP c help\n# TYPE c counter\nc 0\n")
    }
}
