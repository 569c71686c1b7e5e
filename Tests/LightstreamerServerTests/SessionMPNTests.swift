import TLCP
import Testing

@testable import LightstreamerServer

/// MPN operations in the session state machine: handed over one at a time, acknowledged only
/// once the module answered, reported as data notifications.
@Suite struct SessionMPNTests {
    static let register = ControlOperation.mpnRegister(MPNRegisterParameters(platform: .apple, applicationId: "app", deviceToken: "t"))

    func mpnScript() -> SessionScript {
        var settings = SessionScript.settings
        settings.mpnEnabled = true
        var s = SessionScript(settings: settings)
        _ = s.take()
        return s
    }

    func dispatched(_ s: SessionScript) -> [MPNDispatch] {
        s.actions.compactMap { if case .handleMPN(let d) = $0 { d } else { nil } }
    }

    @Test func disabledModuleRefusesWith40() {
        var s = SessionScript()
        _ = s.take()
        s.control(Self.register, id: "1")
        #expect(s.take() == ["REQERR,1,40,MPN Module disabled"])
        #expect(dispatched(s).isEmpty)
    }

    @Test func registerIsAcknowledgedOnlyWhenHandledThenMPNREGIsData() {
        var s = mpnScript()
        s.control(Self.register, id: "1")
        #expect(s.take().isEmpty, "no REQOK before the module committed")
        let d = dispatched(s)
        #expect(d.map(\.operation) == [Self.register])
        s.record(s.machine.mpnHandled(d[0].id, .success(.registered(deviceId: "dev", adapterName: "MPN")), now: s.now))
        #expect(s.take() == ["REQOK,1", "MPNREG,dev,MPN"])
        #expect(s.machine.dataNotificationCount == 1)
    }

    @Test func operationsNeedADeviceRegisteredInThisSession() {
        var s = mpnScript()
        s.control(.mpnResetBadge(deviceId: "dev"), id: "1")
        #expect(s.take() == ["REQERR,1,45,MPN device dev not registered in this session"])
        #expect(dispatched(s).isEmpty)
        s.control(Self.register, id: "2")
        s.record(s.machine.mpnHandled(dispatched(s)[0].id, .success(.registered(deviceId: "dev", adapterName: "MPN")), now: s.now))
        _ = s.take()
        s.control(.mpnResetBadge(deviceId: "dev"), id: "3")
        s.record(s.machine.mpnHandled(dispatched(s)[1].id, .success(.badgeReset(deviceId: "dev")), now: s.now))
        #expect(s.take() == ["REQOK,3", "MPNZERO,dev"])
    }

    @Test func operationsRunOneAtATimeInOrderAndEachGetsItsOutcome() {
        var s = mpnScript()
        s.control(Self.register, id: "1")
        s.record(s.machine.mpnHandled(dispatched(s)[0].id, .success(.registered(deviceId: "dev", adapterName: "MPN")), now: s.now))
        _ = s.take()
        let activate = ControlOperation.mpnActivate(
            MPNActivateParameters(
                subscriptionId: 4, mode: .merge, group: "i", schema: "f",
                deviceId: "dev", notificationFormat: "{}"))
        s.control(activate, id: "2")
        s.control(.mpnReconf(MPNReconfParameters(deviceId: "dev", mpnSubscriptionId: "sub4", trigger: "")), id: "3")
        s.control(.mpnDeactivate(deviceId: "dev", target: .all), id: "4")
        #expect(dispatched(s).count == 2, "the next waits for the one in flight")
        s.record(s.machine.mpnHandled(dispatched(s)[1].id, .success(.activated(subscriptionId: 4, mpnSubscriptionId: "sub4")), now: s.now))
        #expect(dispatched(s).count == 3)
        s.record(s.machine.mpnHandled(dispatched(s)[2].id, .failure(SessionRefusal(code: 56, message: "mismatch")), now: s.now))
        s.record(s.machine.mpnHandled(dispatched(s)[3].id, .success(.deactivated(mpnSubscriptionIds: ["a", "b"])), now: s.now))
        #expect(s.take() == ["REQOK,2", "MPNOK,4,sub4", "REQERR,3,56,mismatch", "REQOK,4", "MPNDEL,a", "MPNDEL,b"])
        #expect(s.machine.dataNotificationCount == 4, "MPNREG, MPNOK and two MPNDEL are data notifications")
    }

    @Test func httpRepliesGoToTheirRequestLine() {
        var s = mpnScript()
        let conn = ConnectionID(9)
        s.control(Self.register, id: "1", origin: .http(conn, index: 0))
        #expect(s.httpReplies[conn] == nil)
        s.record(s.machine.mpnHandled(dispatched(s)[0].id, .failure(SessionRefusal(code: 43, message: "Unknown app")), now: s.now))
        #expect(s.httpReplies[conn]?[0] == "REQERR,1,43,Unknown app")
    }

    @Test func mpnNotificationsAreReplayedOnRecovery() {
        var s = mpnScript()
        s.control(Self.register, id: "1")
        s.record(s.machine.mpnHandled(dispatched(s)[0].id, .success(.registered(deviceId: "dev", adapterName: "MPN")), now: s.now))
        #expect(s.take() == ["REQOK,1", "MPNREG,dev,MPN"])
        s.record(s.machine.connectionClosed(SessionScript.stream, now: s.now))
        let conn = ConnectionID(2)
        s.bind(StreamParameters(), recoveryFrom: 0, on: conn)
        let lines = s.take(conn)
        #expect(lines.contains("PROG,0"))
        #expect(lines.contains("MPNREG,dev,MPN"))
    }
}
