import Foundation
import Testing

@testable import LightstreamerClient

@Suite struct MPNObjectTests {
    @Test func tokenStoreKeepsThePreviousToken() {
        let store = temporaryTokenStore()
        let d1 = MPNDevice(deviceToken: "aa11", applicationId: "com.x", platform: "Apple", tokenStore: store)
        #expect(d1.previousDeviceToken == nil)
        #expect(d1.rotatedFrom == nil)
        let d2 = MPNDevice(deviceToken: "bb22", applicationId: "com.x", platform: "Apple", tokenStore: store)
        #expect(d2.previousDeviceToken == "aa11")
        #expect(d2.rotatedFrom == "aa11")
        let d3 = MPNDevice(deviceToken: "bb22", applicationId: "com.x", platform: "Apple", tokenStore: store)
        #expect(d3.previousDeviceToken == "bb22")
        #expect(d3.rotatedFrom == nil)
        // Per application and platform.
        #expect(MPNDevice(deviceToken: "t", applicationId: "com.y", platform: "Google", tokenStore: store).previousDeviceToken == nil)
        try? FileManager.default.removeItem(at: store.directory)
    }

    @Test func defaultApplicationIdNeverTraps() throws {
        let suite = "mpn-tests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        let dir = FileManager.default.temporaryDirectory
        let noIdentifier = try #require(Bundle(path: dir.path))
        #expect(noIdentifier.bundleIdentifier == nil)
        // Neither LS_appID nor a bundle identifier (a Linux executable): the process name.
        #expect(MPNDevice.defaultApplicationId(defaults: defaults, bundle: noIdentifier, processName: "myapp") == "myapp")
        #expect(MPNDevice.defaultApplicationId(defaults: defaults, bundle: noIdentifier, processName: "") == "lightstreamer-swift-client")
        defaults.set("com.example.fromDefaults", forKey: "LS_appID")
        #expect(
            MPNDevice.defaultApplicationId(defaults: defaults, bundle: noIdentifier, processName: "myapp") == "com.example.fromDefaults")
    }

    @Test func newDeviceIsUnknown() {
        let d = MPNDevice(deviceToken: "t", applicationId: "a", platform: "Google", tokenStore: nil)
        #expect(d.status == .UNKNOWN)
        #expect(!d.isRegistered && !d.isSuspended)
        #expect(d.deviceId == nil && d.statusTimestamp == nil)
        #expect(d.platform == "Google")
    }

    @Test func subscriptionInitializersAndCopies() {
        let s = MPNSubscription(subscriptionMode: .DISTINCT, items: ["a", "b"], fields: ["f", "g"])
        s.dataAdapter = "QUOTES"
        s.requestedBufferSize = .limited(5)
        s.requestedMaxFrequency = .limited(2)
        s.notificationFormat = "{}"
        s.triggerExpression = "true"
        let c = MPNSubscription(MPNSubscription: s)
        #expect(c.mode == .DISTINCT)
        #expect(c.items == ["a", "b"] && c.fields == ["f", "g"])
        #expect(c.dataAdapter == "QUOTES")
        #expect(c.requestedBufferSize == .limited(5))
        #expect(c.requestedMaxFrequency == .limited(2))
        #expect(c.notificationFormat == "{}" && c.triggerExpression == "true")
        #expect(c.subscriptionId == nil && c.status == .UNKNOWN && c.statusTimestamp == 0)

        let rt = Subscription(subscriptionMode: .MERGE, items: ["x"], fields: ["y"])
        rt.dataAdapter = "D"
        let m = MPNSubscription(subscription: rt)
        #expect(m.mode == .MERGE && m.items == ["x"] && m.fields == ["y"] && m.dataAdapter == "D")

        let g = MPNSubscription(subscriptionMode: .MERGE)
        g.items = ["i"]
        g.itemGroup = "grp"
        #expect(g.items == nil && g.itemGroup == "grp")
        g.fields = ["a"]
        g.fieldSchema = "sch"
        #expect(g.fields == nil && g.fieldSchema == "sch")
    }

    @Test func inactiveChangesAreNotified() async {
        let s = MPNSubscription(subscriptionMode: .MERGE)
        let log = MPNEventLog()
        s.addDelegate(log)
        s.triggerExpression = "t"
        s.notificationFormat = "f"
        s.itemGroup = "g"
        #expect(await log.waitFor("property group"))
        #expect(log.all == ["property trigger", "property notification_format", "property group"])
    }

    @Test func engineStateIsCopiedIntoTheObject() {
        let s = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        s.notificationFormat = "requested"
        var st = MPNEngine.SubscriptionState(userMade: true)
        st.status = .TRIGGERED
        st.timestamp = 42
        st.id = "sub"
        st.server = MPNEngine.ServerValues(
            format: "actual", trigger: "trg", group: "i1", schema: "f1", adapter: "A", mode: "MERGE",
            bufferSize: "unlimited", maxFrequency: "2.5")
        s.apply(st)
        #expect(s.isActive && s.isSubscribed && s.isTriggered)
        #expect(s.statusTimestamp == 42 && s.subscriptionId == "sub")
        #expect(s.notificationFormat == "actual" && s.actualNotificationFormat == "actual")
        #expect(s.triggerExpression == "trg")
        #expect(s.itemGroup == "i1" && s.items == nil)
        #expect(s.requestedBufferSize == .unlimited && s.requestedMaxFrequency == .limited(2.5))
    }
}
