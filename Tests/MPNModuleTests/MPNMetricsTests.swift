import Crypto
import Foundation
import MPNTestSupport
import Prometheus
import TLCP
import Testing

@testable import MPNModule

/// The MPN Module's metrics in a Prometheus registry: notifications by outcome and delivery
/// latency through the recording provider, HTTP status codes through the APNs provider against
/// the local HTTP/2 server.
@Suite("MPN metrics")
struct MPNMetricsTests {
    static func series(_ registry: PrometheusCollectorRegistry) -> [String: Double] {
        var out: [String: Double] = [:]
        for line in registry.emitToString().split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let v = Double(line[line.index(after: space)...]) else { continue }
            out[String(line[..<space])] = v
        }
        return out
    }

    @Test("delivered and rejected notifications are counted per platform and app, with their latency")
    func outcomesAndLatency() async throws {
        let registry = PrometheusCollectorRegistry()
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (mpn, store) = try await h.startModule(metrics: MPNMetrics(factory: PrometheusMetricsFactory(registry: registry)))
        let ok = try await mpn.register(
            MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a01"),
            context: h.context
        ).deviceId
        let refused = try await mpn.register(
            MPNRegisterParameters(platform: .apple, applicationId: "com.example.app", deviceToken: "0a02"),
            context: h.context
        ).deviceId
        h.provider.script.withLockedValue { $0["0a02"] = [.rejected(reason: "PayloadTooLarge")] }
        _ = try await mpn.activate(activation(device: ok, format: #"{"aps":{"alert":"$[2]"}}"#), context: h.context)
        _ = try await mpn.activate(activation(device: refused, format: #"{"aps":{"alert":"$[2]"}}"#), context: h.context)
        h.quotes.push("item1", ["stock_name": "A", "last_price": "1"])
        await mpn.settle()
        #expect(h.provider.notifications.count == 2)
        let m = Self.series(registry)
        #expect(
            m[#"lightstreamer_mpn_notifications_total{platform="Apple",app="com.example.app",outcome="delivered"}"#] == 1,
            "\(registry.emitToString())")
        #expect(m[#"lightstreamer_mpn_notifications_total{platform="Apple",app="com.example.app",outcome="rejected"}"#] == 1)
        #expect(m[#"lightstreamer_mpn_delivery_duration_seconds_count{platform="Apple",app="com.example.app"}"#] == 2)
        await mpn.shutdown()
        await store.close()
    }

    @Test("APNs status codes per app")
    func apnsStatusCodes() async throws {
        let registry = PrometheusCollectorRegistry()
        let metrics = MPNMetrics(factory: PrometheusMetricsFactory(registry: registry))
        let key = P256.Signing.PrivateKey().pemRepresentation
        let server = try await H2TestServer.start(script: APNsProviderTests.script)
        let client = testHTTPClient(trusting: server.certificate)
        try await withCleanup(client, server) {
            let provider = try APNsProvider(
                applicationId: "com.example.app",
                configuration: APNsConfiguration(baseURL: server.baseURL, teamId: "TEAM123456", keyId: "KEY1234567", privateKeyPEM: key),
                httpClient: client, clock: ManualWallClock(millis: 1_700_000_000_000), metrics: metrics)
            #expect(await provider.send(try note(hex("ok"))) == .delivered)
            #expect(await provider.send(try note(hex("ok"))) == .delivered)
            _ = await provider.send(try note(hex("gone")))
            _ = await provider.send(try note(hex("busy")))
            let m = Self.series(registry)
            #expect(
                m[#"lightstreamer_mpn_provider_responses_total{provider="apns",app="com.example.app",status="200"}"#] == 2,
                "\(registry.emitToString())")
            #expect(m[#"lightstreamer_mpn_provider_responses_total{provider="apns",app="com.example.app",status="410"}"#] == 1)
            #expect(m[#"lightstreamer_mpn_provider_responses_total{provider="apns",app="com.example.app",status="429"}"#] == 1)
        }
    }

    @Test("application labels are bounded")
    func boundedApps() {
        let registry = PrometheusCollectorRegistry()
        let metrics = MPNMetrics(factory: PrometheusMetricsFactory(registry: registry))
        for i in 0..<(MPNMetrics.maxLabelSets + 20) { metrics.notification(platform: "Apple", app: "app\(i)", outcome: "delivered") }
        let m = Self.series(registry)
        #expect(m.keys.filter { $0.hasPrefix("lightstreamer_mpn_notifications_total") }.count == MPNMetrics.maxLabelSets + 1)
        #expect(m[#"lightstreamer_mpn_notifications_total{platform="Apple",app="other",outcome="delivered"}"#] == 20)
    }
}
