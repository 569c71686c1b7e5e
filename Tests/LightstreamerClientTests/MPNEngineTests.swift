import TLCP
import Testing

@testable import LightstreamerClient

/// The MPN engine alone (no I/O): scripted events in, actions out.
@Suite struct MPNEngineTests {
    static let device = MPNEngine.DeviceInfo(platform: .apple, applicationId: "app", token: "tok")

    /// Operations sent, as compact strings.
    static func sent(_ actions: [MPNEngine.Action]) -> [String] {
        actions.compactMap {
            guard case .send(_, let op, let cause) = $0 else { return nil }
            return op.parameters.encoded + (cause.map { "&LS_cause=" + $0 } ?? "")
        }
    }

    static func tokens(_ actions: [MPNEngine.Action]) -> [Int] {
        actions.compactMap { if case .send(let t, _, _) = $0 { return t } else { return nil } }
    }

    static func deviceEvents(_ actions: [MPNEngine.Action]) -> [MPNEngine.DeviceEvent] {
        actions.compactMap { if case .deviceEvent(let e) = $0 { return e } else { return nil } }
    }

    static func subscriptionEvents(_ actions: [MPNEngine.Action], key: Int) -> [MPNEngine.SubscriptionEvent] {
        actions.flatMap { a -> [MPNEngine.SubscriptionEvent] in
            if case .subscriptionEvents(let k, let e) = a, k == key { return e }
            return []
        }
    }

    static let request = MPNRequest(mode: .MERGE, group: "i1", schema: "f1", format: "fmt")

    /// `subscribeMPN`, then the `LS_subId` the session engine gives the activation when it builds
    /// the request (the shared subscription counter).
    @discardableResult
    static func activate(_ e: inout MPNEngine, key: Int, subId: Int, coalescing: Bool = false) -> [MPNEngine.Action] {
        let a = e.handle(.subscribe(key: key, request, coalescing: coalescing))
        for t in tokens(a) { _ = e.handle(.subscriptionIdAssigned(token: t, subscriptionId: subId)) }
        return a
    }

    /// A registered engine in session `s1`.
    static func registered() -> MPNEngine {
        var e = MPNEngine()
        _ = e.handle(.sessionStarted(id: "s1"))
        _ = e.handle(.register(device, sessionAvailable: true))
        _ = e.handle(.notification(.mpnreg(deviceId: "devid", adapterName: "adapter")))
        return e
    }

    @Test func registerWaitsForASessionThenRegistersOnce() {
        var e = MPNEngine()
        // Sent at once: the session engine keeps it queued, and it is the first request of the
        // next session.
        #expect(
            Self.sent(e.handle(.register(Self.device, sessionAvailable: false))) == [
                "LS_op=register&PN_type=Apple&PN_appId=app&PN_deviceToken=tok"
            ])
        #expect(Self.sent(e.handle(.sessionStarted(id: "s1"))).isEmpty)
        let r = e.handle(.notification(.mpnreg(deviceId: "devid", adapterName: "adapter")))
        #expect(Self.deviceEvents(r) == [.registered, .status(.REGISTERED, timestamp: 0)])
        #expect(r.contains(.subscribeInternal(deviceId: "devid", adapter: "adapter")))
        // A second MPNREG (duplicate register) changes nothing.
        #expect(e.handle(.notification(.mpnreg(deviceId: "devid", adapterName: "adapter"))).isEmpty)
    }

    @Test func storedPreviousTokenIsSentAsRotation() {
        var e = MPNEngine()
        _ = e.handle(.sessionStarted(id: "s1"))
        let d = MPNEngine.DeviceInfo(platform: .google, applicationId: "app", token: "new", previousToken: "old")
        #expect(
            Self.sent(e.handle(.register(d, sessionAvailable: true)))
                == ["LS_op=register&PN_type=Google&PN_appId=app&PN_deviceToken=old&PN_newDeviceToken=new"])
    }

    @Test func newSessionRestoresAndNewTokenRefreshes() {
        var e = Self.registered()
        let restore = e.handle(.sessionStarted(id: "s2"))
        #expect(
            Self.sent(restore) == [
                "LS_op=register&PN_type=Apple&PN_appId=app&PN_deviceToken=tok&PN_newDeviceToken=tok&LS_cause=restore.token"
            ])
        // The device went back to UNKNOWN when the session ended, and its internal items went
        // with it: MPNREG registers it again and subscribes them again.
        #expect(Self.deviceEvents(restore) == [.status(.UNKNOWN, timestamp: 0)])
        #expect(restore.contains(.unsubscribeInternal))
        let again = e.handle(.notification(.mpnreg(deviceId: "devid", adapterName: "adapter")))
        #expect(Self.deviceEvents(again) == [.registered, .status(.REGISTERED, timestamp: 0)])
        #expect(again.contains(.subscribeInternal(deviceId: "devid", adapter: "adapter")))

        var d2 = Self.device
        d2.token = "tok2"
        let refresh = e.handle(.register(d2, sessionAvailable: true))
        #expect(
            Self.sent(refresh) == [
                "LS_op=register&PN_type=Apple&PN_appId=app&PN_deviceToken=tok&PN_newDeviceToken=tok2&LS_cause=refresh.token"
            ])
        _ = e.handle(.notification(.mpnreg(deviceId: "devid", adapterName: "adapter")))
        #expect(
            Self.sent(e.handle(.sessionStarted(id: "s3")))
                == ["LS_op=register&PN_type=Apple&PN_appId=app&PN_deviceToken=tok2&PN_newDeviceToken=tok2&LS_cause=restore.token"])
    }

    @Test func changedDeviceIdOnRestoreIsError62() {
        var e = Self.registered()
        _ = e.handle(.sessionStarted(id: "s2"))
        let a = e.handle(.notification(.mpnreg(deviceId: "other", adapterName: "adapter")))
        #expect(
            Self.deviceEvents(a).first == .registrationFailed(code: 62, message: "DeviceId or Adapter Name has unexpectedly been changed"))
    }

    @Test func registrationRefusedReportsCodeThenUnknown() {
        var e = MPNEngine()
        _ = e.handle(.sessionStarted(id: "s1"))
        let t = Self.tokens(e.handle(.register(Self.device, sessionAvailable: true)))
        let a = e.handle(.reply(token: t[0], code: 43, message: "bad app"))
        #expect(Self.deviceEvents(a) == [.registrationFailed(code: 43, message: "bad app")])
    }

    @Test func operationsWaitForRegistration() {
        var e = MPNEngine()
        _ = e.handle(.sessionStarted(id: "s1"))
        _ = e.handle(.register(Self.device, sessionAvailable: true))
        let a = e.handle(.subscribe(key: 1, Self.request, coalescing: false))
        #expect(Self.sent(a).isEmpty)
        #expect(Self.subscriptionEvents(a, key: 1) == [.status(.ACTIVE, timestamp: 0)])
        #expect(Self.sent(e.handle(.resetBadge)).isEmpty)
        let r = e.handle(.notification(.mpnreg(deviceId: "devid", adapterName: "adapter")))
        #expect(
            Self.sent(r) == [
                "LS_op=activate&LS_subId=0&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt",
                "LS_op=reset_badge&PN_deviceId=devid", // LS_subId 0: numbered by the session engine
            ])
    }

    @Test func coalescedActivationsShareOneId() {
        var e = Self.registered()
        let a1 = Self.activate(&e, key: 1, subId: 1, coalescing: true)
        let a2 = Self.activate(&e, key: 2, subId: 2, coalescing: true)
        #expect(Self.sent(a1 + a2).allSatisfy { $0.hasSuffix("&PN_coalescing=true") })
        _ = e.handle(.notification(.mpnok(subscriptionId: 1, mpnSubscriptionId: "sub3")))
        let ok2 = e.handle(.notification(.mpnok(subscriptionId: 2, mpnSubscriptionId: "sub3")))
        #expect(Self.subscriptionEvents(ok2, key: 2) == [.status(.SUBSCRIBED, timestamp: 0), .subscribed])
        #expect(e.subscriptions[1]?.id == "sub3" && e.subscriptions[2]?.id == "sub3")
        // One MPNDEL ends both objects.
        let del = e.handle(.notification(.mpndel(mpnSubscriptionId: "sub3")))
        #expect(Self.subscriptionEvents(del, key: 1).contains(.unsubscribed))
        #expect(Self.subscriptionEvents(del, key: 2).contains(.unsubscribed))
    }

    @Test func filteredUnsubscribeMapsStatuses() {
        var e = Self.registered()
        #expect(Self.sent(e.handle(.unsubscribeFilter(.ALL))) == ["LS_op=deactivate&PN_deviceId=devid"])
        #expect(Self.sent(e.handle(.unsubscribeFilter(.SUBSCRIBED))) == ["LS_op=deactivate&PN_deviceId=devid&PN_subscriptionStatus=ACTIVE"])
        #expect(
            Self.sent(e.handle(.unsubscribeFilter(.TRIGGERED))) == ["LS_op=deactivate&PN_deviceId=devid&PN_subscriptionStatus=TRIGGERED"])
    }

    @Test func filteredUnsubscribeRefusedReportsToMatchingSubscriptions() {
        var e = Self.registered()
        Self.activate(&e, key: 1, subId: 1)
        _ = e.handle(.notification(.mpnok(subscriptionId: 1, mpnSubscriptionId: "s")))
        let t = Self.tokens(e.handle(.unsubscribeFilter(.SUBSCRIBED)))
        let a = e.handle(.reply(token: t[0], code: 41, message: "db"))
        #expect(Self.subscriptionEvents(a, key: 1) == [.unsubscriptionFailed(code: 41, message: "db")])
    }

    @Test func modificationBeforeMPNOKIsSentAfterIt() {
        var e = Self.registered()
        Self.activate(&e, key: 1, subId: 1)
        #expect(Self.sent(e.handle(.modify(key: 1, .trigger("x > 1")))).isEmpty)
        let ok = e.handle(.notification(.mpnok(subscriptionId: 1, mpnSubscriptionId: "s")))
        #expect(
            Self.sent(ok) == [
                "LS_op=pn_reconf&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_subscriptionId=s&PN_trigger=x%20%3E%201"
            ])
        let t = Self.tokens(ok)
        let refused = e.handle(.reply(token: t[0], code: 44, message: "syntax"))
        #expect(Self.subscriptionEvents(refused, key: 1) == [.modificationFailed(code: 44, message: "syntax", property: "trigger")])
    }

    @Test func activationRefusedGoesBackToUnknown() {
        var e = Self.registered()
        let t = Self.tokens(e.handle(.subscribe(key: 1, Self.request, coalescing: false)))
        let a = e.handle(.reply(token: t[0], code: 52, message: "json"))
        #expect(Self.subscriptionEvents(a, key: 1) == [.status(.UNKNOWN, timestamp: 0), .subscriptionFailed(code: 52, message: "json")])
        #expect(e.subscriptions[1]?.status == .UNKNOWN)
    }

    @Test func requestsLostWithTheSessionAreAborted() {
        var e = Self.registered()
        let t = Self.tokens(e.handle(.subscribe(key: 1, Self.request, coalescing: false)))
        // Sent, no answer, then the session ended: the session engine hands it back.
        let a = e.handle(.dropped(token: t[0], sent: true))
        #expect(
            Self.subscriptionEvents(a, key: 1).contains(
                .subscriptionFailed(code: 54, message: "The request was aborted because the session was closed")))
        #expect(e.subscriptions[1]?.status == .UNKNOWN)
    }

    @Test func requestsNeverSentWaitForTheNextRegistration() {
        var e = Self.registered()
        let t = Self.tokens(e.handle(.subscribe(key: 1, Self.request, coalescing: false)))
        _ = e.handle(.sessionEnded)
        // Too late for the ended session: handed back unsent.
        let back = e.handle(.dropped(token: t[0], sent: false))
        #expect(Self.subscriptionEvents(back, key: 1).isEmpty)
        #expect(e.subscriptions[1]?.status == .ACTIVE)
        #expect(Self.sent(e.handle(.sessionStarted(id: "s2"))).isEmpty) // the restore register was queued at the end
        let r = e.handle(.notification(.mpnreg(deviceId: "devid", adapterName: "adapter")))
        #expect(
            Self.sent(r) == ["LS_op=activate&LS_subId=0&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt"]
        )
    }

    @Test func unsubscribeBeforeMPNOKDeactivatesAfterIt() {
        var e = Self.registered()
        Self.activate(&e, key: 1, subId: 1)
        #expect(Self.sent(e.handle(.unsubscribe(key: 1))).isEmpty)
        let ok = e.handle(.notification(.mpnok(subscriptionId: 1, mpnSubscriptionId: "s")))
        #expect(Self.sent(ok) == ["LS_op=deactivate&PN_deviceId=devid&PN_subscriptionId=s"])
    }

    @Test func deviceSuspendAndResumeFromTheDEVItem() {
        var e = Self.registered()
        let s = e.handle(.deviceItem(status: "SUSPENDED", timestamp: "200"))
        #expect(Self.deviceEvents(s) == [.status(.SUSPENDED, timestamp: 200), .suspended])
        let r = e.handle(.deviceItem(status: "ACTIVE", timestamp: "300"))
        #expect(Self.deviceEvents(r) == [.status(.REGISTERED, timestamp: 300), .resumed])
        #expect(e.deviceTimestamp == 300)
    }

    @Test func serverItemsTriggerAndPropertyChanges() {
        var e = Self.registered()
        Self.activate(&e, key: 1, subId: 1)
        _ = e.handle(.notification(.mpnok(subscriptionId: 1, mpnSubscriptionId: "s")))
        _ = e.handle(.subscriptionsItemSubscribed)
        var values: [String: String?] = [
            "status": "ACTIVE", "status_timestamp": "10", "notification_format": "fmt", "trigger": nil,
            "group": "i1", "schema": "f1", "adapter": nil, "mode": "MERGE",
            "requested_buffer_size": nil, "requested_max_frequency": nil,
        ]
        _ = e.handle(.subscriptionsItem(key: "SUB-s", command: "ADD", values: values))
        let eos = e.handle(.subscriptionsEndOfSnapshot)
        #expect(Self.deviceEvents(eos) == [.subscriptionsUpdated])
        values["status"] = "TRIGGERED"
        values["status_timestamp"] = "20"
        let trig = e.handle(.subscriptionsItem(key: "SUB-s", command: "UPDATE", values: values))
        #expect(Self.subscriptionEvents(trig, key: 1) == [.property("status_timestamp"), .status(.TRIGGERED, timestamp: 20), .triggered])
        values["notification_format"] = "fmt2"
        let fmt = e.handle(.subscriptionsItem(key: "SUB-s", command: "UPDATE", values: values))
        #expect(Self.subscriptionEvents(fmt, key: 1) == [.property("notification_format")])
    }

    @Test func preexistingSubscriptionsBecomeObjectsAndGoAwayOnDelete() {
        var e = Self.registered()
        _ = e.handle(.subscriptionsItemSubscribed)
        let add = e.handle(.subscriptionsItem(key: "SUB-x", command: "ADD", values: [:]))
        #expect(!add.contains { if case .createSubscription = $0 { return true } else { return false } })
        _ = e.handle(.subscriptionsEndOfSnapshot)
        let v = e.handle(.subscriptionsItem(key: "SUB-x", command: "UPDATE", values: ["status": "ACTIVE", "group": "g"]))
        #expect(v.contains(.createSubscription(key: -1)))
        #expect(Self.deviceEvents(v) == [.subscriptionsUpdated])
        #expect(e.subscriptions[-1]?.status == .SUBSCRIBED)
        let del = e.handle(.subscriptionsItem(key: "SUB-x", command: "DELETE", values: [:]))
        #expect(del.contains(.removeSubscription(key: -1)))
        #expect(Self.deviceEvents(del) == [.subscriptionsUpdated])
        #expect(e.subscriptions[-1] == nil)
    }

    @Test func newSnapshotDropsSubscriptionsDeletedMeanwhile() {
        var e = Self.registered()
        _ = e.handle(.subscriptionsItemSubscribed)
        _ = e.handle(.subscriptionsItem(key: "SUB-x", command: "ADD", values: ["status": "ACTIVE"]))
        _ = e.handle(.subscriptionsEndOfSnapshot)
        #expect(e.subscriptions[-1] != nil)
        _ = e.handle(.subscriptionsItemSubscribed)
        let eos = e.handle(.subscriptionsEndOfSnapshot)
        #expect(eos.contains(.removeSubscription(key: -1)))
    }

    @Test func badgeResetOutcomes() {
        var e = Self.registered()
        let t = Self.tokens(e.handle(.resetBadge))
        #expect(Self.deviceEvents(e.handle(.notification(.mpnzero(deviceId: "devid")))) == [.badgeReset])
        #expect(Self.deviceEvents(e.handle(.reply(token: t[0], code: nil, message: nil))).isEmpty)
        let t2 = Self.tokens(e.handle(.resetBadge))
        #expect(
            Self.deviceEvents(e.handle(.reply(token: t2[0], code: 45, message: "dev"))) == [.badgeResetFailed(code: 45, message: "dev")])
    }

    /// The seed: `isActive` goes back to false on client disconnection. The objects stay (same
    /// key, id kept) and the next registration's SUBS- snapshot gives them back their status;
    /// one the server no longer lists goes away.
    @Test func subscriptionsGoUnknownWhenTheSessionEndsAndComeBackWithTheNextSnapshot() {
        var e = Self.registered()
        Self.activate(&e, key: 1, subId: 1)
        _ = e.handle(.notification(.mpnok(subscriptionId: 1, mpnSubscriptionId: "a")))
        _ = e.handle(.subscriptionsItemSubscribed)
        let active: [String: String?] = [
            "status": "ACTIVE", "status_timestamp": "10", "notification_format": "fmt", "group": "i1",
            "schema": "f1", "mode": "MERGE",
        ]
        var triggered = active
        triggered["status"] = "TRIGGERED"
        _ = e.handle(.subscriptionsItem(key: "SUB-a", command: "ADD", values: active))
        _ = e.handle(.subscriptionsItem(key: "SUB-b", command: "ADD", values: triggered)) // server-made, key -1
        _ = e.handle(.subscriptionsItem(key: "SUB-c", command: "ADD", values: active)) // server-made, key -2
        _ = e.handle(.subscriptionsEndOfSnapshot)
        #expect(e.subscriptions[-1]?.status == .TRIGGERED)
        #expect(e.subscriptions[-2]?.status == .SUBSCRIBED)

        let end = e.handle(.sessionEnded)
        // Status change only: they were not unsubscribed.
        #expect(Self.subscriptionEvents(end, key: 1) == [.status(.UNKNOWN, timestamp: 10)])
        #expect(Self.subscriptionEvents(end, key: -1) == [.status(.UNKNOWN, timestamp: 10)])
        #expect(Self.subscriptionEvents(end, key: -2) == [.status(.UNKNOWN, timestamp: 10)])
        #expect(!end.contains { if case .removeSubscription = $0 { return true } else { return false } })
        for k in [1, -1, -2] {
            #expect(e.subscriptions[k]?.status == .UNKNOWN)
            #expect(e.subscriptions[k]?.id != nil)
        }
        // The runtime's objects see status UNKNOWN with the id kept.
        #expect(
            end.contains { if case .subscriptionState(1, let s) = $0 { return s.status == .UNKNOWN && s.id == "a" } else { return false } })

        _ = e.handle(.sessionStarted(id: "s2"))
        let reg = e.handle(.notification(.mpnreg(deviceId: "devid", adapterName: "adapter")))
        #expect(reg.contains(.subscribeInternal(deviceId: "devid", adapter: "adapter")))
        _ = e.handle(.subscriptionsItemSubscribed)
        // The server lists a (now TRIGGERED) and b; c was deleted while no session was watching.
        var a2 = triggered
        a2["status_timestamp"] = "30"
        let ra = e.handle(.subscriptionsItem(key: "SUB-a", command: "ADD", values: a2))
        #expect(!ra.contains { if case .createSubscription = $0 { return true } else { return false } })
        #expect(
            Self.subscriptionEvents(ra, key: 1) == [
                .property("status_timestamp"), .status(.TRIGGERED, timestamp: 30), .triggered, .subscribed,
            ])
        let rb = e.handle(.subscriptionsItem(key: "SUB-b", command: "ADD", values: triggered))
        #expect(Self.subscriptionEvents(rb, key: -1) == [.status(.TRIGGERED, timestamp: 10), .triggered, .subscribed])
        let eos = e.handle(.subscriptionsEndOfSnapshot)
        #expect(eos.contains(.removeSubscription(key: -2)))
        #expect(Self.subscriptionEvents(eos, key: -2) == [.unsubscribed])
        #expect(Self.deviceEvents(eos) == [.subscriptionsUpdated])
        #expect(e.subscriptions[1]?.status == .TRIGGERED)
        #expect(e.subscriptions[1]?.id == "a")
        #expect(e.subscriptions[-1]?.status == .TRIGGERED)
        #expect(e.subscriptions[-2] == nil)
        #expect(Set(e.subscriptions.keys) == [1, -1])
    }

    /// An application's object missing from the new snapshot keeps existing (it is the
    /// application's) but loses its id; a DELETE of a disconnected one does the same.
    @Test func applicationSubscriptionDeletedWhileDisconnectedLosesItsId() {
        var e = Self.registered()
        Self.activate(&e, key: 1, subId: 1)
        _ = e.handle(.notification(.mpnok(subscriptionId: 1, mpnSubscriptionId: "a")))
        Self.activate(&e, key: 2, subId: 2)
        _ = e.handle(.notification(.mpnok(subscriptionId: 2, mpnSubscriptionId: "b")))
        _ = e.handle(.sessionEnded)
        _ = e.handle(.sessionStarted(id: "s2"))
        _ = e.handle(.notification(.mpnreg(deviceId: "devid", adapterName: "adapter")))
        _ = e.handle(.subscriptionsItemSubscribed)
        let del = e.handle(.subscriptionsItem(key: "SUB-b", command: "DELETE", values: [:]))
        #expect(Self.subscriptionEvents(del, key: 2) == [.unsubscribed])
        let eos = e.handle(.subscriptionsEndOfSnapshot)
        #expect(Self.subscriptionEvents(eos, key: 1) == [.unsubscribed])
        for k in [1, 2] {
            #expect(e.subscriptions[k]?.status == .UNKNOWN)
            #expect(e.subscriptions[k]?.id == nil)
        }
        // It can be subscribed again.
        #expect(Self.sent(e.handle(.subscribe(key: 1, Self.request, coalescing: false))).count == 1)
    }
}
