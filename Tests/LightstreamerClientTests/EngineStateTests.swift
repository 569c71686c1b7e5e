import TLCP
import Testing

@testable import LightstreamerClient

/// The engine's lifecycle value: what each phase holds, and that ending a session drops it.
@Suite struct EngineStateTests {
    func phase(_ e: SessionEngine) -> String {
        switch e.state {
        case .idle: return "idle"
        case .creating: return "creating"
        case .active: return "active"
        }
    }

    @Test func aCreateHoldsItsStreamAndCONOKMakesTheSession() {
        var h = EngineHarness()
        #expect(phase(h.engine) == "idle")
        h.send(.connect)
        #expect(phase(h.engine) == "creating")
        #expect(h.engine.stream?.kind == .create && h.engine.session == nil)
        h.send(.webSocketOpened(h.lastWebSocket ?? 0))
        h.receive(h.lastWebSocket, "WSOK", "CONOK,sid,70000,5000,*")
        #expect(phase(h.engine) == "active")
        #expect(h.engine.session?.id == "sid" && h.engine.session?.stream?.gotConok == true)
    }

    @Test func disconnectDropsTheSessionWithEverythingItHeld() {
        var h = EngineHarness()
        h.connectWS()
        h.send(
            .sendMessage(
                key: 1,
                SessionEngine.MessageSpec(
                    text: "m", sequence: "S", timeout: -1, wantsOutcome: true,
                    enqueueWhileDisconnected: false)))
        #expect(h.engine.session?.messageProgressives["S"] == 2)
        #expect(!(h.engine.session?.requests.isEmpty ?? true))
        h.send(.disconnect)
        #expect(phase(h.engine) == "idle")
        #expect(h.engine.session == nil && h.engine.stream == nil && h.engine.requests.isEmpty)
    }

    @Test func aFailedCreateGoesBackToIdle() {
        var h = EngineHarness()
        h.send(.connect)
        h.send(.connectionFailed(h.lastWebSocket ?? 0, "refused"))
        // Stream-Sense creates again over HTTP: a new create, still no session.
        #expect(phase(h.engine) == "creating" && h.engine.session == nil)
        h.send(.connectionFailed(h.lastHTTP ?? 0, "refused"))
        #expect(phase(h.engine) == "idle" && h.status == "DISCONNECTED:WILL-RETRY")
    }
}
