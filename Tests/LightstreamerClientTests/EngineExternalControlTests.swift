import TLCP
import Testing

@testable import LightstreamerClient

/// External (MPN) controls in the session engine: numbering of `activate`, the first request of
/// a new session, and what happens to them when the session ends.
@Suite struct EngineExternalControlTests {
    static let register = ControlOperation.mpnRegister(MPNRegisterParameters(platform: .google, applicationId: "app", deviceToken: "tok"))

    static func activate(_ group: String) -> ControlOperation {
        .mpnActivate(
            MPNActivateParameters(
                subscriptionId: 0, mode: .merge, group: group, schema: "f1", deviceId: "devid",
                notificationFormat: "fmt"))
    }

    static func dropped(_ n: [SessionEngine.Notification]) -> [String] {
        n.compactMap { e -> String? in
            switch e {
            case .externalDropped(let t, let sent): return "dropped \(t) \(sent)"
            case .sessionEnded: return "ended"
            default: return nil
            }
        }
    }

    @Test func activateTakesTheSubscriptionCounter() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
        _ = h.takeSent()
        _ = h.takeNotifications()
        h.send(
            .externalControls([
                SessionEngine.ExternalControl(token: 7, operation: Self.activate("a")),
                SessionEngine.ExternalControl(token: 8, operation: Self.activate("b")),
            ]))
        h.send(.subscribe(key: 2, spec: spec(.merge, items: ["i2"], fields: ["f1"])))
        #expect(
            h.takeSent() == [
                "ws#1 control|LS_reqId=2&LS_op=activate&LS_subId=2&LS_mode=MERGE&LS_group=a&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt"
                    + "|LS_reqId=3&LS_op=activate&LS_subId=3&LS_mode=MERGE&LS_group=b&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt",
                "ws#1 control|LS_reqId=4&LS_op=add&LS_subId=4&LS_mode=MERGE&LS_group=i2&LS_schema=f1&LS_snapshot=true&LS_ack=false",
            ])
        let ids = h.takeNotifications().compactMap { n -> String? in
            if case .externalSubscriptionId(let t, let s) = n { return "\(t):\(s)" } else { return nil }
        }
        #expect(ids == ["7:2", "8:3"])
    }

    @Test func queuedWithoutSessionGoesFirstInTheNextOne() {
        var h = EngineHarness()
        h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i1"], fields: ["f1"])))
        h.send(.externalControl(token: 1, operation: Self.register, cause: "restore.token"))
        h.connectWS()
        let controls = h.takeSent().filter { $0.contains(" control|") }
        #expect(
            controls == [
                "ws#1 control|LS_reqId=1&LS_op=register&PN_type=Google&PN_appId=app&PN_deviceToken=tok&LS_cause=restore.token"
                    + "|LS_reqId=2&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=i1&LS_schema=f1&LS_snapshot=true&LS_ack=false"
            ])
    }

    @Test func requestForAnotherSessionComesBackUnsent() {
        var h = EngineHarness()
        h.connectWS()
        _ = h.takeSent()
        _ = h.takeNotifications()
        h.send(.externalControl(token: 5, operation: Self.activate("a"), session: "old"))
        #expect(h.takeSent().isEmpty)
        #expect(Self.dropped(h.takeNotifications()) == ["dropped 5 false"])
        h.send(.externalControl(token: 6, operation: Self.activate("a"), session: "sid"))
        #expect(h.takeSent().count == 1)
    }

    @Test func sessionEndHandsBackSentAndQueuedRequests() {
        var h = EngineHarness()
        h.connectWS()
        h.send(.externalControl(token: 1, operation: Self.register))
        h.receive(1, "REQOK,1")
        h.send(.externalControl(token: 2, operation: Self.activate("a")))
        _ = h.takeNotifications()
        // The socket drops: the session is in recovery, requests wait; then disconnect().
        h.send(.connectionFailed(1, "test"))
        h.send(.externalControl(token: 3, operation: Self.activate("b")))
        h.send(.disconnect)
        // Token 1 was answered; token 2 went on the network without an answer; token 3 was
        // still queued.
        #expect(Self.dropped(h.takeNotifications()) == ["dropped 2 true", "dropped 3 false", "ended"])
        // A request made with no session waits for the next one.
        h.send(.externalControl(token: 4, operation: Self.register))
        _ = h.takeSent()
        h.connectWS()
        #expect(
            h.takeSent().filter { $0.contains(" control|") } == [
                "ws#3 control|LS_reqId=4&LS_op=register&PN_type=Google&PN_appId=app&PN_deviceToken=tok"
            ])
    }
}
