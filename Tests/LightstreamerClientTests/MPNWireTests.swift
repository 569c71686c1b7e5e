import Foundation
import TLCP
import Testing

@testable import LightstreamerClient

/// The MPN exchanges of docs/protocol/TLCP.md §6 (E4, E5), run through a whole
/// `LightstreamerClient` on a fake WebSocket: the control lines it writes and the delegate events
/// it reports.
@Suite struct MPNWireTests {
    /// Control lines without their `LS_reqId`, which depends on what else was sent.
    static func strip(_ lines: [String]) -> [String] {
        lines.map { l in
            guard l.hasPrefix("LS_reqId="), let amp = l.firstIndex(of: "&") else { return l }
            return String(l[l.index(after: amp)...])
        }
    }

    struct Setup {
        let transport: MPNFakeTransport
        let client: LightstreamerClient
        let device: MPNDevice
        let log: MPNEventLog

        init(platform: String = "Google") {
            let budget = MPNWaitBudget()
            transport = MPNFakeTransport(budget: budget)
            log = MPNEventLog(budget: budget)
            client = LightstreamerClient("http://server", adapterSet: "TEST", transport: transport)
            // These tests run on the real clock, in one process with the whole suite: a test's
            // task may wait seconds for a thread of the cooperative pool. With the default 4 s,
            // the client's create timeout fired during such a wait; it then (rightly) gave the
            // WebSocket up for HTTP, which this fake never answers, and the script stalled.
            client.connectionOptions.retryDelay = 600_000
            device = MPNDevice(deviceToken: "tok", applicationId: "com.example.testapp", platform: platform, tokenStore: nil)
            device.addDelegate(log)
        }

        /// The CONOK keepalive is 10 minutes: these tests run on the real clock, and on a loaded
        /// machine a step can take longer than a short keepalive plus the stalled timeout, after
        /// which the client would (rightly) reconnect and leave the script.
        func connect() async {
            client.connect()
            _ = await transport.waitFor("create_session")
            transport.receive("WSOK", "CONOK,sid,70000,600000,*")
        }

        /// E4 up to the internal subscriptions, with an empty SUBS- snapshot.
        func registered() async -> [String] {
            await connect()
            client.register(forMPN: device)
            _ = await transport.waitFor("LS_op=register")
            transport.receive("MPNREG,devid,adapter")
            _ = await log.waitFor("registered")
            _ = await transport.waitFor("SUBS-devid")
            return transport.takeControls()
        }
    }

    @Test func e4RegisterThenInternalItemsListPreexistingSubscription() async throws {
        let t = Setup()
        await t.connect()
        _ = t.transport.takeControls()
        t.client.register(forMPN: t.device)
        _ = await t.transport.waitFor("LS_op=register")
        #expect(Self.strip(t.transport.takeControls()) == ["LS_op=register&PN_type=Google&PN_appId=com.example.testapp&PN_deviceToken=tok"])

        t.transport.receive("MPNREG,devid,adapter")
        #expect(await t.log.waitFor("registered devid"))
        _ = await t.transport.waitFor("SUBS-devid")
        let adds = Self.strip(t.transport.takeControls())
        #expect(
            adds.contains(
                "LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=DEV-devid&LS_schema=status%20status_timestamp&LS_data_adapter=adapter&LS_snapshot=true&LS_requested_max_frequency=unfiltered&LS_ack=false"
            ))
        #expect(
            adds.contains(
                "LS_op=add&LS_subId=2&LS_mode=COMMAND&LS_group=SUBS-devid&LS_schema=key%20command&LS_data_adapter=adapter&LS_snapshot=true&LS_requested_max_frequency=unfiltered&LS_ack=false"
            ))
        #expect(t.device.status == .REGISTERED)
        #expect(t.device.deviceId == "devid")

        t.transport.receive("SUBCMD,2,1,2,1,2", "U,2,1,SUB-sub3|ADD")
        _ = await t.transport.waitFor("SUB-sub3")
        let second = Self.strip(t.transport.takeControls())
        // The second-level item inherits the first level's unfiltered frequency
        // (docs/protocol/TLCP.md §6 E4).
        #expect(
            second == [
                "LS_op=add&LS_subId=3&LS_mode=MERGE&LS_group=SUB-sub3&LS_schema=status%20status_timestamp%20notification_format%20trigger%20group%20schema%20adapter%20mode%20requested_buffer_size%20requested_max_frequency&LS_data_adapter=adapter&LS_snapshot=true&LS_requested_max_frequency=unfiltered&LS_ack=false"
            ])
        t.transport.receive("EOS,2,1", "SUBOK,3,1,10", "U,3,1,ACTIVE|100|fmt|trg|i1|f1|adt|MERGE|unlimited|unlimited")
        #expect(await t.log.waitFor("subscriptionsUpdated"))
        let list = t.client.MPNSubscriptions
        #expect(list.count == 1)
        let s = try #require(list.first)
        #expect(s.subscriptionId == "sub3")
        #expect(s.notificationFormat == "fmt")
        #expect(s.triggerExpression == "trg")
        #expect(s.itemGroup == "i1")
        #expect(s.fieldSchema == "f1")
        #expect(s.dataAdapter == "adt")
        #expect(s.status == .SUBSCRIBED)
        #expect(s.statusTimestamp == 100)
        #expect(t.client.findMPNSubscription("sub3") === s)
        #expect(t.log.all.filter { $0 == "subscriptionsUpdated" }.count == 1)
    }

    @Test func e4EarlyDeletionLeavesTheListEmpty() async {
        let t = Setup()
        _ = await t.registered()
        t.transport.receive("SUBCMD,2,1,2,1,2", "U,2,1,SUB-sub3|ADD", "U,2,1,SUB-sub3|DELETE", "EOS,2,1")
        #expect(await t.log.waitFor("subscriptionsUpdated"))
        #expect(t.client.MPNSubscriptions.isEmpty)
    }

    @Test func e5ActivateReconfigureDeactivateResetBadge() async throws {
        let t = Setup()
        _ = await t.registered()
        t.transport.receive("SUBCMD,2,1,2,1,2", "EOS,2,1")
        #expect(await t.log.waitFor("subscriptionsUpdated"))

        let sub = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        sub.notificationFormat = "fmt"
        sub.triggerExpression = "trg"
        sub.addDelegate(t.log)
        t.client.subscribeMPN(sub, coalescing: false)
        #expect(sub.status == .ACTIVE)
        _ = await t.transport.waitFor("LS_op=activate")
        #expect(
            Self.strip(t.transport.takeControls()) == [
                "LS_op=activate&LS_subId=3&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt&PN_trigger=trg"
            ])
        t.transport.receive("MPNOK,3,sub3")
        #expect(await t.log.waitFor("subscribed sub3"))
        #expect(sub.subscriptionId == "sub3")
        #expect(sub.isSubscribed)

        sub.triggerExpression = nil
        _ = await t.transport.waitFor("LS_op=pn_reconf")
        #expect(
            Self.strip(t.transport.takeControls()) == [
                "LS_op=pn_reconf&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_subscriptionId=sub3&PN_trigger="
            ])
        t.transport.receive("MPNCONF,sub3")

        t.client.unsubscribeMPN(sub)
        _ = await t.transport.waitFor("LS_op=deactivate")
        #expect(Self.strip(t.transport.takeControls()) == ["LS_op=deactivate&PN_deviceId=devid&PN_subscriptionId=sub3"])
        t.transport.receive("MPNDEL,sub3")
        #expect(await t.log.waitFor("unsubscribed"))
        #expect(sub.status == .UNKNOWN)
        #expect(!sub.isActive)

        t.client.resetMPNBadge()
        _ = await t.transport.waitFor("LS_op=reset_badge")
        #expect(Self.strip(t.transport.takeControls()) == ["LS_op=reset_badge&PN_deviceId=devid"])
        t.transport.receive("MPNZERO,devid")
        #expect(await t.log.waitFor("badgeReset"))

        t.client.unsubscribeMultipleMPN(.TRIGGERED)
        _ = await t.transport.waitFor("PN_subscriptionStatus")
        #expect(Self.strip(t.transport.takeControls()) == ["LS_op=deactivate&PN_deviceId=devid&PN_subscriptionStatus=TRIGGERED"])
    }

    @Test func registerBeforeConnectWaitsForTheSession() async {
        let t = Setup(platform: "Apple")
        t.client.register(forMPN: t.device)
        t.client.connect()
        let created = await t.transport.waitFor("create_session")
        #expect(!created.contains { $0.contains("LS_op=register") })
        t.transport.receive("WSOK", "CONOK,sid,70000,600000,*")
        _ = await t.transport.waitFor("LS_op=register")
        #expect(Self.strip(t.transport.takeControls()) == ["LS_op=register&PN_type=Apple&PN_appId=com.example.testapp&PN_deviceToken=tok"])
    }

    @Test func modificationRefusedIsReported() async {
        let t = Setup()
        _ = await t.registered()
        let sub = MPNSubscription(subscriptionMode: .DISTINCT, items: ["a", "b"], fields: ["x"])
        sub.notificationFormat = "{}"
        sub.addDelegate(t.log)
        t.client.subscribeMPN(sub, coalescing: true)
        let sent = await t.transport.waitFor("LS_op=activate")
        #expect(
            sent.joined().contains(
                "LS_mode=DISTINCT&LS_group=a%20b&LS_schema=x&PN_deviceId=devid&PN_notificationFormat=%7B%7D&PN_coalescing=true"))
        t.transport.receive("MPNOK,3,subX")
        #expect(await t.log.waitFor("subscribed subX"))
        sub.notificationFormat = "bad"
        let reconf = await t.transport.waitFor("LS_op=pn_reconf")
        let reqId = reconf.joined().components(separatedBy: "LS_reqId=").last?.prefix { $0.isNumber } ?? ""
        t.transport.receive("REQERR,\(reqId),52,bad format")
        #expect(await t.log.waitFor("modificationFailed 52 notification_format"))
    }

    @Test func newSessionRestoresTheRegistration() async {
        let t = Setup()
        _ = await t.registered()
        t.client.disconnect()
        _ = await t.transport.waitFor("LS_op=destroy")
        _ = t.transport.takeControls()
        t.transport.clear()
        t.client.connect()
        _ = await t.transport.waitFor("create_session")
        t.transport.receive("WSOK", "CONOK,sid2,70000,600000,*")
        _ = await t.transport.waitFor("LS_op=register")
        let regs = Self.strip(t.transport.takeControls()).filter { $0.contains("LS_op=register") }
        #expect(
            regs == [
                "LS_op=register&PN_type=Google&PN_appId=com.example.testapp&PN_deviceToken=tok&PN_newDeviceToken=tok&LS_cause=restore.token"
            ])
        t.transport.receive("MPNREG,devid,adapter")
        #expect(await t.log.waitFor("registered devid", count: 2))
        #expect(t.log.all.filter { $0.hasPrefix("registered") }.count == 2)
    }
}
