import Foundation
import Testing

@testable import LightstreamerClient

/// The public API surface: defaults, units, property events, preconditions
/// (docs/protocol/CLIENT-API.md).
@Suite struct APITests {
    @Test func connectionOptionDefaults() {
        let c = LightstreamerClient(serverAddress: "http://localhost:8080", adapterSet: "DEMO")
        let o = c.connectionOptions
        #expect(o.contentLength == 50_000_000)
        #expect(o.firstRetryMaxDelay == 100)
        #expect(o.forcedTransport == nil)
        #expect(o.HTTPExtraHeaders == nil)
        #expect(o.idleTimeout == 19_000)
        #expect(o.keepaliveInterval == 0)
        #expect(o.requestedMaxBandwidth == .unlimited)
        #expect(o.realMaxBandwidth == nil)
        #expect(o.pollingInterval == 0)
        #expect(o.reconnectTimeout == 3_000)
        #expect(o.retryDelay == 4_000)
        #expect(o.reverseHeartbeatInterval == 0)
        #expect(o.sessionRecoveryTimeout == 15_000)
        #expect(o.stalledTimeout == 2_000)
        #expect(o.HTTPExtraHeadersOnSessionCreationOnly == false)
        #expect(o.serverInstanceAddressIgnored == false)
        #expect(o.slowingEnabled == false)
        #expect(c.status == .DISCONNECTED)
        #expect(c.connectionDetails.adapterSet == "DEMO")
        #expect(c.connectionDetails.serverAddress == "http://localhost:8080")
        #expect(c.connectionDetails.description.contains("libVersion"))
        #expect(LightstreamerClient.LIB_NAME == "swift_client")
        #expect(LightstreamerClient.LIB_VERSION == "6.4.0-alpha.1")
    }

    @Test func statusStrings() {
        #expect(
            LightstreamerClient.Status.allCases.map(\.description) == [
                "CONNECTING", "CONNECTED:STREAM-SENSING", "CONNECTED:WS-STREAMING", "CONNECTED:HTTP-STREAMING",
                "CONNECTED:WS-POLLING", "CONNECTED:HTTP-POLLING", "STALLED", "DISCONNECTED:WILL-RETRY",
                "DISCONNECTED:TRYING-RECOVERY", "DISCONNECTED",
            ])
        #expect(
            TransportSelection.allCases.map(\.rawValue) == ["WS", "WS-STREAMING", "WS-POLLING", "HTTP", "HTTP-STREAMING", "HTTP-POLLING"])
        #expect(RequestedMaxBandwidth.limited(12.5).description == "12.5 kilobits/sec")
        #expect(RealMaxBandwidth.unmanaged.description == "unmanaged")
        #expect(RealMaxFrequency.limited(2).description == "2.0 updates/sec")
        #expect(ConsoleLogLevel.warn.rawValue == 25)
    }

    final class PropertyRecorder: ClientDelegate, @unchecked Sendable {
        let lock = NSLock()
        var names: [String] = []
        func clientDidRemoveDelegate(_ client: LightstreamerClient) {}
        func clientDidAddDelegate(_ client: LightstreamerClient) { lock.withLock { names.append("+") } }
        func client(_ client: LightstreamerClient, didReceiveServerError errorCode: Int, withMessage errorMessage: String) {}
        func client(_ client: LightstreamerClient, didChangeStatus status: LightstreamerClient.Status) {}
        func client(_ client: LightstreamerClient, didChangeProperty property: String) { lock.withLock { names.append(property) } }
    }

    @Test func propertyEventsFireOnlyOnChange() async throws {
        let c = LightstreamerClient(serverAddress: nil)
        let r = PropertyRecorder()
        c.addDelegate(r)
        c.addDelegate(r)
        #expect(c.delegates.count == 1)
        let o = c.connectionOptions
        o.retryDelay = 5000
        o.retryDelay = 5000
        o.forcedTransport = .WS
        o.HTTPExtraHeaders = ["a": "b"]
        o.HTTPExtraHeadersOnSessionCreationOnly = true
        o.requestedMaxBandwidth = .limited(10)
        c.connectionDetails.serverAddress = "https://push.example.com/prefix"
        c.connectionDetails.setPassword("x")
        c.connectionDetails.user = "u"
        c.connectionDetails.adapterSet = "A"
        try await Task.sleep(for: .milliseconds(100))
        CallbackQueue.queue.sync {}
        #expect(
            r.lock.withLock { r.names } == [
                "+", "retryDelay", "forcedTransport", "HTTPExtraHeaders", "HTTPExtraHeadersOnSessionCreationOnly",
                "requestedMaxBandwidth", "serverAddress", "password", "user", "adapterSet",
            ])
    }

    @Test func subscriptionDefaultsAndSpec() {
        let s = Subscription(subscriptionMode: .MERGE, items: ["item1", "item2"], fields: ["last_price", "time"])
        #expect(s.requestedSnapshot == .yes)
        #expect(Subscription(subscriptionMode: .RAW).requestedSnapshot == nil)
        #expect(!s.isActive && !s.isSubscribed)
        s.requestedMaxFrequency = .limited(1.5)
        s.requestedBufferSize = .limited(10)
        s.dataAdapter = "QUOTE_ADAPTER"
        s.selector = "sel"
        let spec = s.spec
        #expect(spec.group == "item1 item2")
        #expect(spec.schema == "last_price time")
        #expect(spec.maxFrequency == .limited(1.5))
        #expect(spec.bufferSize == .size(10))
        s.itemGroup = "group"
        #expect(s.items == nil)
        s.fieldSchema = "schema"
        #expect(s.fields == nil)
        #expect(Subscription.isValidItemName("item1"))
        #expect(!Subscription.isValidItemName("12"))
        #expect(!Subscription.isValidItemName("a b"))
        #expect(!Subscription.isValidItemName(""))
    }

    @Test func itemUpdateAccessors() {
        let u = ItemUpdateValue(
            itemName: "i", itemPos: 1, isSnapshot: false, values: ["a", nil, "c"],
            changed: [true, false, true], fieldNames: ["f1", "f2", "f3"], patches: [2: "[]"])
        #expect(u.fields == ["f1": "a", "f2": nil, "f3": "c"])
        #expect(u.changedFields == ["f1": "a", "f3": "c"])
        #expect(u.changedFieldsByPositions == [1: "a", 3: "c"])
        #expect(u.value(withFieldPos: 3) == "c")
        #expect(u.value(withFieldName: "f2") == nil)
        #expect(u.isValueChanged(withFieldName: "f1"))
        #expect(!u.isValueChanged(withFieldPos: 2))
        #expect(u.valueAsJSONPatchIfAvailable(withFieldPos: 3) == "[]")
    }

    @Test func serverAddressParsing() {
        guard case .success(let a) = ServerAddress.parse("https://host.com:8443/pre/") else {
            Issue.record("parse failed")
            return
        }
        #expect(a.webSocketURL == "wss://host.com:8443/pre/lightstreamer")
        #expect(
            a.httpURL(.control, session: "S") == "https://host.com:8443/pre/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0&LS_session=S")
        #expect(ServerAddress.parse("ftp://x") == .failure(.badScheme))
        #expect(ServerAddress.parse("http://x?a=b") == .failure(.hasQuery))
        #expect(ServerAddress.parse("nonsense") == .failure(.malformed))
        #expect(a.applyingControlLink("other.com/TestPrefix")?.base == "https://other.com/TestPrefix")
    }

    // Preconditions trap as in the official API (each runs in a child process).
    @Test func preconditionsTrap() async {
        await #expect(processExitsWith: .failure) { _ = LightstreamerClient(serverAddress: "ftp://x") }
        await #expect(processExitsWith: .failure) { LightstreamerClient(serverAddress: nil).connect() }
        await #expect(processExitsWith: .failure) { LightstreamerClient(serverAddress: nil).connectionOptions.retryDelay = 0 }
        await #expect(processExitsWith: .failure) { LightstreamerClient(serverAddress: nil).connectionOptions.idleTimeout = -1 }
        await #expect(processExitsWith: .failure) {
            LightstreamerClient(serverAddress: nil).connectionOptions.requestedMaxBandwidth = .limited(0)
        }
        await #expect(processExitsWith: .failure) { _ = Subscription(subscriptionMode: .COMMAND, items: ["a"], fields: ["x"]) }
        await #expect(processExitsWith: .failure) { _ = Subscription(subscriptionMode: .MERGE, items: ["1"], fields: ["x"]) }
        await #expect(processExitsWith: .failure) { Subscription(subscriptionMode: .RAW).requestedSnapshot = .yes }
        await #expect(processExitsWith: .failure) { Subscription(subscriptionMode: .MERGE).requestedSnapshot = .length(3) }
        await #expect(processExitsWith: .failure) {
            LightstreamerClient(serverAddress: nil).subscribe(Subscription(subscriptionMode: .MERGE))
        }
        await #expect(processExitsWith: .failure) {
            LightstreamerClient(serverAddress: nil).sendMessage("x", withSequence: "bad seq")
        }
        await #expect(processExitsWith: .failure) {
            let c = LightstreamerClient(serverAddress: nil)
            let s = Subscription(subscriptionMode: .MERGE, items: ["a"], fields: ["b"])
            c.subscribe(s)
            s.items = ["c"]
        }
        await #expect(processExitsWith: .failure) {
            let c = LightstreamerClient(serverAddress: nil)
            let s = Subscription(subscriptionMode: .MERGE, items: ["a"], fields: ["b"])
            c.subscribe(s)
            c.subscribe(s)
        }
    }
}
