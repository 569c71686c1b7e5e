import Foundation
import TLCP
import Testing

@testable import LightstreamerClient

/// Scripted MPN exchanges through a whole `LightstreamerClient` on a fake WebSocket
/// (docs/protocol/TLCP.md §6 E5 batch, token refresh and restore, coalescing, filtered unsubscribe,
/// failures). Subscription ids: after MPNREG the client subscribes `DEV-` (LS_subId 1) and `SUBS-`
/// (2); activations share that counter.
@Suite struct MPNExchangeTests {
    typealias Setup = MPNWireTests.Setup
    static func strip(_ lines: [String]) -> [String] { MPNWireTests.strip(lines) }

    /// The `LS_reqId` of the last control line containing `part`.
    static func reqId(_ messages: [String], _ part: String) -> String {
        let line = messages.flatMap { $0.split(separator: "|").map(String.init) }.last { $0.contains(part) } ?? ""
        guard line.hasPrefix("LS_reqId=") else { return "" }
        return String(line.dropFirst("LS_reqId=".count).prefix { $0.isNumber })
    }

    /// A registered client with an empty SUBS- snapshot and one MPN subscription made active
    /// with `MPNOK,<subId>,<mpnId>`.
    static func activeSubscription(_ t: Setup, mpnId: String = "sub3", subId: Int = 3, trigger: String? = nil) async -> MPNSubscription {
        _ = await t.registered()
        t.transport.receive("SUBCMD,2,1,2,1,2", "EOS,2,1")
        _ = await t.log.waitFor("subscriptionsUpdated")
        let sub = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        sub.notificationFormat = "fmt"
        sub.triggerExpression = trigger
        sub.addDelegate(t.log)
        t.client.subscribeMPN(sub, coalescing: false)
        _ = await t.transport.waitFor("LS_op=activate")
        _ = t.transport.takeControls()
        t.transport.receive("MPNOK,\(subId),\(mpnId)")
        _ = await t.log.waitFor("subscribed \(mpnId)")
        return sub
    }

    // MARK: E5 batch

    @Test func requestsWaitingForMPNREGGoInOneBatch() async {
        let t = Setup()
        await t.connect()
        _ = t.transport.takeControls()
        t.client.register(forMPN: t.device)
        _ = await t.transport.waitFor("LS_op=register")
        _ = t.transport.takeControls()
        let a = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        let b = MPNSubscription(subscriptionMode: .DISTINCT, item: "i2", fields: ["f2"])
        for s in [a, b] {
            s.notificationFormat = "fmt"
            s.addDelegate(t.log)
            t.client.subscribeMPN(s, coalescing: false)
        }
        t.client.resetMPNBadge()
        t.client.unsubscribeMultipleMPN(.TRIGGERED)
        // Nothing goes before the device is registered in the session.
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(t.transport.takeControls().isEmpty)

        t.transport.receive("MPNREG,devid,adapter")
        let sent = await t.transport.waitFor("PN_subscriptionStatus")
        let batch = sent.first { $0.contains("LS_op=activate") } ?? ""
        let lines = batch.split(separator: "|").map(String.init)
        #expect(lines.first == "control")
        #expect(
            Self.strip(Array(lines.dropFirst())) == [
                "LS_op=activate&LS_subId=3&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt",
                "LS_op=activate&LS_subId=4&LS_mode=DISTINCT&LS_group=i2&LS_schema=f2&PN_deviceId=devid&PN_notificationFormat=fmt",
                "LS_op=reset_badge&PN_deviceId=devid",
                "LS_op=deactivate&PN_deviceId=devid&PN_subscriptionStatus=TRIGGERED",
            ])
        let first = Int(Self.reqId([batch], "LS_op=activate&LS_subId=3")) ?? 0
        t.transport.receive(
            "REQOK,\(first)", "REQOK,\(first + 1)", "REQOK,\(first + 2)", "REQOK,\(first + 3)",
            "MPNOK,3,sub3", "MPNOK,4,sub4", "MPNZERO,devid")
        #expect(await t.log.waitFor("subscribed sub4"))
        #expect(await t.log.waitFor("badgeReset"))
        #expect(a.subscriptionId == "sub3" && a.status == .SUBSCRIBED)
        #expect(b.subscriptionId == "sub4" && b.status == .SUBSCRIBED)
    }

    // MARK: refresh.token and restore.token

    @Test func newTokenDuringTheSessionIsARefresh() async {
        let t = Setup()
        _ = await t.registered()
        let d2 = MPNDevice(deviceToken: "tok2", applicationId: "com.example.testapp", platform: "Google", tokenStore: nil)
        d2.addDelegate(t.log)
        t.client.register(forMPN: d2)
        _ = await t.transport.waitFor("LS_op=register")
        #expect(
            Self.strip(t.transport.takeControls()) == [
                "LS_op=register&PN_type=Google&PN_appId=com.example.testapp&PN_deviceToken=tok&PN_newDeviceToken=tok2&LS_cause=refresh.token"
            ])
        t.transport.receive("MPNREG,devid,adapter")
        #expect(await t.log.waitFor("registered devid", count: 2))
        #expect(d2.deviceId == "devid")
        #expect(d2.status == .REGISTERED)
        // Same device id: the internal items stay.
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(!t.transport.takeControls().contains { $0.contains("LS_op=add") })

        // The next session restores the new token.
        t.client.disconnect()
        _ = await t.transport.waitFor("LS_op=destroy")
        t.transport.clear()
        t.client.connect()
        _ = await t.transport.waitFor("create_session")
        t.transport.receive("WSOK", "CONOK,sid2,70000,600000,*")
        _ = await t.transport.waitFor("LS_op=register")
        #expect(
            Self.strip(t.transport.takeControls()) == [
                "LS_op=register&PN_type=Google&PN_appId=com.example.testapp&PN_deviceToken=tok2&PN_newDeviceToken=tok2&LS_cause=restore.token"
            ])
    }

    @Test func storedPreviousTokenIsSentAsRotation() async {
        let store = temporaryTokenStore()
        defer { try? FileManager.default.removeItem(at: store.directory) }
        _ = MPNDevice(deviceToken: "old", applicationId: "com.example.testapp", platform: "Apple", tokenStore: store)
        let device = MPNDevice(deviceToken: "new", applicationId: "com.example.testapp", platform: "Apple", tokenStore: store)
        #expect(device.previousDeviceToken == "old")
        let t = Setup()
        await t.connect()
        _ = t.transport.takeControls()
        t.client.register(forMPN: device)
        _ = await t.transport.waitFor("LS_op=register")
        // A rotation found at start-up, not during the session: no LS_cause.
        #expect(
            Self.strip(t.transport.takeControls()) == [
                "LS_op=register&PN_type=Apple&PN_appId=com.example.testapp&PN_deviceToken=old&PN_newDeviceToken=new"
            ])
    }

    @Test func registrationWithAnotherDeviceIdOnRestoreIsError62() async {
        let t = Setup()
        _ = await t.registered()
        t.client.disconnect()
        _ = await t.transport.waitFor("LS_op=destroy")
        t.client.connect()
        _ = await t.transport.waitFor("create_session")
        t.transport.receive("WSOK", "CONOK,sid2,70000,600000,*")
        _ = await t.transport.waitFor("restore.token")
        t.transport.receive("MPNREG,otherid,adapter")
        #expect(await t.log.waitFor("registrationFailed 62"))
        #expect(t.device.status == .UNKNOWN)
    }

    @Test func sessionEndMakesTheDeviceUnknownAndTheRestoreGoesFirst() async {
        let t = Setup()
        _ = await t.registered()
        t.transport.receive("SUBCMD,2,1,2,1,2", "EOS,2,1")
        #expect(await t.log.waitFor("subscriptionsUpdated"))
        let plain = Subscription(subscriptionMode: .MERGE, item: "p1", fields: ["f"])
        t.client.subscribe(plain)
        _ = await t.transport.waitFor("LS_group=p1")
        t.transport.receive("SUBOK,3,1,1")
        _ = t.transport.takeControls()

        t.client.disconnect()
        #expect(await t.log.waitFor("device UNKNOWN 0"))
        #expect(t.device.status == .UNKNOWN)
        #expect(!t.device.isRegistered)
        // Documented order: registered, REGISTERED, then UNKNOWN at the disconnection.
        let deviceEvents = t.log.all.filter { $0.hasPrefix("registered") || $0.hasPrefix("device") }
        #expect(deviceEvents == ["registered devid", "device REGISTERED 0", "device UNKNOWN 0"])

        // An MPN subscription made while disconnected waits for the registration.
        let sub = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        sub.notificationFormat = "fmt"
        sub.addDelegate(t.log)
        t.client.subscribeMPN(sub, coalescing: false)
        _ = await t.transport.waitFor("LS_op=destroy")
        t.transport.clear()

        t.client.connect()
        _ = await t.transport.waitFor("create_session")
        t.transport.receive("WSOK", "CONOK,sid2,70000,600000,*")
        _ = await t.transport.waitFor("LS_group=p1")
        try? await Task.sleep(nanoseconds: 50_000_000)
        let first = Self.strip(t.transport.takeControls())
        // The re-registration is the first request of the new session; the application's
        // subscription follows; nothing else MPN goes before MPNREG.
        #expect(
            first.first
                == "LS_op=register&PN_type=Google&PN_appId=com.example.testapp&PN_deviceToken=tok&PN_newDeviceToken=tok&LS_cause=restore.token"
        )
        #expect(first.count == 2)
        #expect(first.last?.contains("LS_group=p1") == true)

        t.transport.receive("MPNREG,devid,adapter")
        _ = await t.transport.waitFor("LS_op=activate")
        let after = Self.strip(t.transport.takeControls())
        #expect(after.count == 3)
        #expect(after.first?.contains("LS_group=DEV-devid") == true)
        #expect(after.dropFirst().first?.contains("LS_group=SUBS-devid") == true)
        // One counter for add and activate, across sessions: DEV 1, SUBS 2, p1 3, then p1 4,
        // DEV 5, SUBS 6.
        #expect(
            after.last == "LS_op=activate&LS_subId=7&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt")
        #expect(await t.log.waitFor("registered devid", count: 2))
        #expect(t.device.status == .REGISTERED)
    }

    // MARK: coalescing

    @Test func coalescedActivationsShareTheServerId() async {
        let t = Setup()
        _ = await t.registered()
        t.transport.receive("SUBCMD,2,1,2,1,2", "EOS,2,1")
        _ = await t.log.waitFor("subscriptionsUpdated")
        let a = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        let b = MPNSubscription(MPNSubscription: a)
        for s in [a, b] {
            s.notificationFormat = "fmt"
            s.addDelegate(t.log)
        }
        t.client.subscribeMPN(a, coalescing: true)
        _ = await t.transport.waitFor("LS_subId=3")
        t.client.subscribeMPN(b, coalescing: true)
        _ = await t.transport.waitFor("LS_subId=4")
        #expect(
            Self.strip(t.transport.takeControls()) == [
                "LS_op=activate&LS_subId=3&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt&PN_coalescing=true",
                "LS_op=activate&LS_subId=4&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt&PN_coalescing=true",
            ])
        t.transport.receive("MPNOK,3,sub3", "MPNOK,4,sub3")
        #expect(await t.log.waitFor("subscribed sub3", count: 2))
        #expect(a.subscriptionId == "sub3" && b.subscriptionId == "sub3")
        #expect(t.client.MPNSubscriptions.count == 1)
        t.transport.receive("MPNDEL,sub3")
        #expect(await t.log.waitFor("unsubscribed", count: 2))
        #expect(!a.isActive && !b.isActive)
    }

    // MARK: filtered unsubscribe

    @Test func filteredUnsubscribeWithSeveralMPNDEL() async {
        let t = Setup()
        _ = await t.registered()
        t.transport.receive("SUBCMD,2,1,2,1,2", "U,2,1,SUB-s1|ADD", "U,2,1,SUB-s2|ADD")
        _ = await t.transport.waitFor("LS_group=SUB-s2")
        t.transport.receive(
            "EOS,2,1", "SUBOK,3,1,10", "SUBOK,4,1,10",
            "U,3,1,ACTIVE|100|fmt|#|i1|f1|#|MERGE|#|#",
            "U,4,1,TRIGGERED|200|fmt|x > 1|i2|f1|#|MERGE|#|#")
        #expect(await t.log.waitFor("subscriptionsUpdated"))
        #expect(t.client.filterMPNSubscriptions(.SUBSCRIBED).map(\.subscriptionId) == ["s1"])
        #expect(t.client.filterMPNSubscriptions(.TRIGGERED).map(\.subscriptionId) == ["s2"])
        #expect(Set(t.client.filterMPNSubscriptions(nil).compactMap(\.subscriptionId)) == ["s1", "s2"])
        let objects = t.client.MPNSubscriptions
        for o in objects { o.addDelegate(t.log) }
        _ = t.transport.takeControls()

        t.client.unsubscribeMultipleMPN(.SUBSCRIBED)
        _ = await t.transport.waitFor("PN_subscriptionStatus=ACTIVE")
        t.client.unsubscribeMultipleMPN(.TRIGGERED)
        _ = await t.transport.waitFor("PN_subscriptionStatus=TRIGGERED")
        t.client.unsubscribeMultipleMPN(.ALL)
        for _ in 0..<300 {
            if await t.transport.waitFor("LS_op=deactivate").joined().components(separatedBy: "LS_op=deactivate").count > 3 { break }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(
            Self.strip(t.transport.takeControls()).filter { $0.contains("deactivate") } == [
                "LS_op=deactivate&PN_deviceId=devid&PN_subscriptionStatus=ACTIVE",
                "LS_op=deactivate&PN_deviceId=devid&PN_subscriptionStatus=TRIGGERED",
                "LS_op=deactivate&PN_deviceId=devid",
            ])
        // One MPNDEL per subscription removed, no end marker.
        t.transport.receive("MPNDEL,s1", "MPNDEL,s2", "U,2,1,SUB-s1|DELETE", "U,2,1,SUB-s2|DELETE")
        #expect(await t.log.waitFor("unsubscribed", count: 2))
        #expect(objects.allSatisfy { !$0.isActive })
        #expect(t.client.MPNSubscriptions.isEmpty)
    }

    @Test func filteredUnsubscribeRefusedIsReportedToMatchingSubscriptions() async {
        let t = Setup()
        let sub = await Self.activeSubscription(t)
        t.client.unsubscribeMultipleMPN(.SUBSCRIBED)
        let sent = await t.transport.waitFor("PN_subscriptionStatus=ACTIVE")
        t.transport.receive("REQERR,\(Self.reqId(sent, "PN_subscriptionStatus")),41,database")
        #expect(await t.log.waitFor("unsubscriptionFailed 41"))
        #expect(sub.isActive)
    }

    // MARK: modifications

    @Test func modificationFailuresNameTheProperty() async {
        let t = Setup()
        let sub = await Self.activeSubscription(t, trigger: "x > 1")
        sub.triggerExpression = "x >"
        var sent = await t.transport.waitFor("LS_op=pn_reconf")
        #expect(
            Self.strip(t.transport.takeControls()) == [
                "LS_op=pn_reconf&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_subscriptionId=sub3&PN_trigger=x%20%3E"
            ])
        t.transport.receive("REQERR,\(Self.reqId(sent, "pn_reconf")),44,syntax")
        #expect(await t.log.waitFor("modificationFailed 44 trigger"))

        sub.notificationFormat = "{\"a\":1}"
        sent = await t.transport.waitFor("PN_notificationFormat=%7B")
        t.transport.receive("REQERR,\(Self.reqId(sent, "pn_reconf")),56,changed")
        #expect(await t.log.waitFor("modificationFailed 56 notification_format"))

        // An empty format is refused by the client without a request.
        _ = t.transport.takeControls()
        sub.notificationFormat = nil
        #expect(await t.log.waitFor("modificationFailed 53 notification_format"))
        #expect(t.transport.takeControls().isEmpty)
        #expect(sub.isActive)
    }

    @Test func reconfiguredValuesArriveOnTheSUBItem() async {
        let t = Setup()
        _ = await t.registered()
        t.transport.receive("SUBCMD,2,1,2,1,2", "EOS,2,1")
        _ = await t.log.waitFor("subscriptionsUpdated")
        let sub = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        sub.notificationFormat = "fmt"
        sub.triggerExpression = "trg"
        sub.addDelegate(t.log)
        t.client.subscribeMPN(sub, coalescing: false)
        _ = await t.transport.waitFor("LS_op=activate")
        t.transport.receive("MPNOK,3,sub3", "U,2,1,SUB-sub3|ADD")
        _ = await t.transport.waitFor("LS_group=SUB-sub3")
        t.transport.receive("SUBOK,4,1,10", "U,4,1,ACTIVE|100|fmt|trg|i1|f1|#|MERGE|#|#")
        #expect(await t.log.waitFor("property status_timestamp"))
        sub.triggerExpression = nil
        _ = await t.transport.waitFor("LS_op=pn_reconf")
        t.transport.receive("MPNCONF,sub3", "U,4,1,|110||#||||||")
        #expect(await t.log.waitFor("property trigger", count: 2))
        #expect(sub.triggerExpression == nil)
        #expect(sub.actualTriggerExpression == nil)
        #expect(sub.statusTimestamp == 110)
        #expect(t.client.MPNSubscriptions.count == 1)
        #expect(t.client.findMPNSubscription("sub3") === sub)
    }

    @Test func subItemBeforeMPNOKMergesIntoTheApplicationsObject() async {
        let t = Setup()
        _ = await t.registered()
        t.transport.receive("SUBCMD,2,1,2,1,2", "EOS,2,1")
        _ = await t.log.waitFor("subscriptionsUpdated")
        let sub = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        sub.notificationFormat = "fmt"
        sub.addDelegate(t.log)
        t.client.subscribeMPN(sub, coalescing: false)
        _ = await t.transport.waitFor("LS_op=activate")
        // The server lists the new subscription (and triggers it) before MPNOK arrives.
        t.transport.receive("U,2,1,SUB-sub3|ADD")
        _ = await t.transport.waitFor("LS_group=SUB-sub3")
        t.transport.receive("SUBOK,4,1,10", "U,4,1,TRIGGERED|100|fmt|#|i1|f1|#|MERGE|#|#")
        #expect(await t.log.waitFor("subscriptionsUpdated", count: 2))
        t.transport.receive("MPNOK,3,sub3")
        #expect(await t.log.waitFor("triggered"))
        #expect(sub.subscriptionId == "sub3")
        #expect(sub.status == .TRIGGERED)
        #expect(t.client.MPNSubscriptions.count == 1)
        #expect(t.client.findMPNSubscription("sub3") === sub)
        #expect(t.client.filterMPNSubscriptions(.TRIGGERED).first === sub)
    }

    // MARK: failures

    @Test(arguments: [17, 21, 40, 45, 48, 52, 53, -3])
    func activationRefusedReportsTheCode(code: Int) async {
        let t = Setup()
        _ = await t.registered()
        let sub = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        sub.notificationFormat = "fmt"
        sub.addDelegate(t.log)
        t.client.subscribeMPN(sub, coalescing: false)
        let sent = await t.transport.waitFor("LS_op=activate")
        t.transport.receive("REQERR,\(Self.reqId(sent, "LS_op=activate")),\(code),refused")
        #expect(await t.log.waitFor("subscriptionFailed \(code)"))
        #expect(t.log.all.filter { $0.hasPrefix("status") } == ["status ACTIVE 0", "status UNKNOWN 0"])
        #expect(sub.status == .UNKNOWN)
        #expect(sub.subscriptionId == nil)
    }

    @Test func deactivationRefusedKeepsTheSubscription() async {
        let t = Setup()
        let sub = await Self.activeSubscription(t)
        t.client.unsubscribeMPN(sub)
        let sent = await t.transport.waitFor("PN_subscriptionId=sub3")
        t.transport.receive("REQERR,\(Self.reqId(sent, "LS_op=deactivate")),46,unknown")
        #expect(await t.log.waitFor("unsubscriptionFailed 46"))
        #expect(sub.isSubscribed)
    }

    @Test func registrationRefusedReportsTheCodeThenUnknown() async {
        let t = Setup()
        await t.connect()
        t.client.register(forMPN: t.device)
        let sent = await t.transport.waitFor("LS_op=register")
        t.transport.receive("REQERR,\(Self.reqId(sent, "LS_op=register")),43,bad app")
        #expect(await t.log.waitFor("registrationFailed 43"))
        #expect(t.device.status == .UNKNOWN)
        #expect(t.device.deviceId == nil)
    }

    @Test func badgeResetRefused() async {
        let t = Setup()
        _ = await t.registered()
        t.client.resetMPNBadge()
        let sent = await t.transport.waitFor("LS_op=reset_badge")
        t.transport.receive("REQERR,\(Self.reqId(sent, "reset_badge")),45,unknown device")
        #expect(await t.log.waitFor("badgeResetFailed 45"))
    }

    @Test func activationLostWithTheSessionFailsWith54() async {
        let t = Setup()
        _ = await t.registered()
        let sub = MPNSubscription(subscriptionMode: .MERGE, item: "i1", fields: ["f1"])
        sub.notificationFormat = "fmt"
        sub.addDelegate(t.log)
        t.client.subscribeMPN(sub, coalescing: false)
        _ = await t.transport.waitFor("LS_op=activate")
        t.client.disconnect()
        #expect(await t.log.waitFor("subscriptionFailed 54"))
        #expect(sub.status == .UNKNOWN)
    }
}
