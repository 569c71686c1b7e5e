import Foundation
import Testing

@testable import LightstreamerClient

/// The `description`s and `LogManager.getLogger(_:)` as code written for the official 6.4
/// client sees them.
@Suite struct DescriptionParityTests {
    @Test func limitedEnumsPrintTheirDoubleAsSwiftDoes() {
        #expect(RequestedMaxBandwidth.limited(40).description == "40.0 kilobits/sec")
        #expect(RealMaxBandwidth.limited(12.5).description == "12.5 kilobits/sec")
        #expect(RealMaxFrequency.limited(3).description == "3.0 updates/sec")
        #expect(Subscription.RequestedMaxFrequency.limited(1).description == "1.0 updates/sec")
        #expect(MPNSubscription.RequestedMaxFrequency.limited(1).description == "1.0 updates/sec")
        #expect(Subscription.RequestedBufferSize.limited(5).description == "5")
        #expect(Subscription.RequestedSnapshot.length(7).description == "7")
    }

    @Test func connectionDetailsListOnlyWhatIsSet() {
        let c = LightstreamerClient(serverAddress: "http://localhost:8080", adapterSet: "DEMO")
        #expect(
            c.connectionDetails.description
                == "[serverAddress: http://localhost:8080, adapterSet: DEMO, libVersion: swift_client 6.4.0-alpha.1]")
        c.connectionDetails.user = "alice"
        c.connectionDetails.setPassword("secret")
        let text = c.connectionDetails.description
        #expect(text.contains(", user: alice, "))
        #expect(!text.contains("secret"))
    }

    @Test func connectionOptionsLeaveOutUnsetTimeoutsAndFalseFlags() {
        let c = LightstreamerClient(serverAddress: "http://localhost:8080", adapterSet: "DEMO")
        let o = c.connectionOptions
        #expect(
            o.description == "[requestedMaxBandwidth: unlimited, retryDelay: 4000, firstRetryMaxDelay: 100, "
                + "sessionRecoveryTimeout: 15000, stalledTimeout: 2000, reconnectTimeout: 3000, idleTimeout: 19000, "
                + "contentLength: 50000000]")
        o.forcedTransport = .WS_STREAMING
        o.requestedMaxBandwidth = .limited(40)
        o.keepaliveInterval = 5000
        o.slowingEnabled = true
        o.HTTPExtraHeaders = ["X-A": "1"]
        let text = o.description
        #expect(text.hasPrefix("[forcedTransport: WS-STREAMING, requestedMaxBandwidth: 40.0 kilobits/sec, "))
        #expect(text.contains(", keepaliveInterval: 5000, "))
        #expect(text.contains(", slowingEnabled: true, "))
        #expect(!text.contains("serverInstanceAddressIgnored"))
        #expect(text.hasSuffix(", HTTPExtraHeaders: [\"X-A\": \"1\"]]"))
    }

    @Test func subscriptionsPrintTheirRequest() {
        let s = Subscription(subscriptionMode: .MERGE, items: ["item1", "item2"], fields: ["last_price"])
        // The snapshot is requested by default except in RAW mode.
        #expect(s.description == "[mode: MERGE, items: [\"item1\", \"item2\"], fields: [\"last_price\"], requestedSnapshot: yes]")
        s.requestedMaxFrequency = .limited(2)
        s.dataAdapter = "QUOTE_ADAPTER"
        #expect(
            s.description == "[mode: MERGE, items: [\"item1\", \"item2\"], fields: [\"last_price\"], "
                + "dataAdapter: QUOTE_ADAPTER, requestedSnapshot: yes, requestedMaxFrequency: 2.0 updates/sec]")

        let g = Subscription(subscriptionMode: .COMMAND)
        g.itemGroup = "portfolio1"
        g.fieldSchema = "key command qty"
        g.requestedSnapshot = .no
        #expect(g.description == "[mode: COMMAND, items: portfolio1, fields: key command qty, requestedSnapshot: no]")
        let raw = Subscription(subscriptionMode: .RAW, item: "news", fields: ["headline"])
        #expect(raw.description == "[mode: RAW, items: [\"news\"], fields: [\"headline\"]]")

        let m = MPNSubscription(subscriptionMode: .MERGE, item: "item1", fields: ["last_price"])
        m.triggerExpression = "Double.parseDouble(${last_price}) > 10"
        #expect(
            m.description == "[mode: MERGE, items: [\"item1\"], fields: [\"last_price\"], "
                + "trigger: Double.parseDouble(${last_price}) > 10]")
    }

    @Test func devicesAndUpdatesUseTheOfficialLayout() {
        let d = MPNDevice(deviceToken: "tok2", applicationId: "com.example.app", platform: "Google", tokenStore: nil)
        #expect(d.description == "[deviceToken: tok2, applicationId: com.example.app, platform: Google]")

        let named = ItemUpdateValue(
            itemName: "item1", itemPos: 1, isSnapshot: false, values: ["a", nil],
            changed: [true, true], fieldNames: ["f1", "f2"])
        #expect(named.description == "[f1:a,f2:nil]")
        let unnamed = ItemUpdateValue(
            itemName: nil, itemPos: 1, isSnapshot: false, values: ["x", "y"],
            changed: [true, false], fieldNames: nil)
        #expect(unnamed.description == "[1:x,2:y]")
    }

    final class RecordingProvider: LSLoggerProvider, @unchecked Sendable {
        let lock = NSLock()
        var lines: [String] = []
        func loggerWithCategory(_ category: String) -> LSLogger { Recorder(category: category, provider: self) }
        func record(_ s: String) { lock.withLock { lines.append(s) } }
        var recorded: [String] { lock.withLock { lines } }
    }

    struct Recorder: LSLogger {
        let category: String
        let provider: RecordingProvider
        func error(_ line: String) { provider.record("\(category) error \(line)") }
        func error(_ line: String, withException exception: Error) { error(line) }
        func warn(_ line: String) { provider.record("\(category) warn \(line)") }
        func warn(_ line: String, withException exception: Error) { warn(line) }
        func info(_ line: String) { provider.record("\(category) info \(line)") }
        func info(_ line: String, withException exception: Error) { info(line) }
        func debug(_ line: String) {}
        func debug(_ line: String, withException exception: Error) {}
        func trace(_ line: String) {}
        func trace(_ line: String, withException exception: Error) {}
        func fatal(_ line: String) {}
        func fatal(_ line: String, withException exception: Error) {}
        var isTraceEnabled: Bool { false }
        var isDebugEnabled: Bool { false }
        var isInfoEnabled: Bool { true }
        var isWarnEnabled: Bool { true }
        var isErrorEnabled: Bool { true }
        var isFatalEnabled: Bool { false }
    }

    @Test func getLoggerFollowsTheProviderSetLater() {
        // A category of this test's own: other tests may log through the provider meanwhile.
        let logger = LogManager.getLogger("parity.test")
        logger.info("before any provider")
        #expect(!logger.isInfoEnabled)
        let provider = RecordingProvider()
        LightstreamerClient.setLoggerProvider(provider)
        defer { LogManager.setProvider(nil) }
        logger.warn("after")
        #expect(logger.isWarnEnabled)
        #expect(provider.recorded.filter { $0.hasPrefix("parity.test ") } == ["parity.test warn after"])
    }
}
