import TLCP
import Testing

@testable import LightstreamerServer

/// Per-session limits, scripted without I/O: what a client meets at each bound.
@Suite struct SessionLimitsTests {
    static func settings(_ change: (inout SessionSettings) -> Void) -> SessionSettings {
        var s = SessionScript.settings
        change(&s)
        return s
    }

    static func add(_ id: Int) -> ControlOperation {
        .add(SubscribeParameters(subscriptionId: id, mode: .merge, group: "g", schema: "s"))
    }

    @Test func subscriptionsPerSession() {
        var s = SessionScript(settings: Self.settings { $0.maxSubscriptionsPerSession = 2 })
        _ = s.take()
        s.control(Self.add(1), id: "1")
        s.control(Self.add(2), id: "2")
        s.control(Self.add(3), id: "3")
        let subscribes = s.actions.filter { if case .subscribe = $0 { true } else { false } }
        #expect(subscribes.count == 2)
        #expect(s.take().contains { $0.hasPrefix("REQERR,3,30,Too many subscriptions") })
    }

    @Test func queuedMessagesAndSequences() {
        var s = SessionScript(
            settings: Self.settings {
                $0.maxQueuedMessages = 2
                $0.maxMessageSequences = 2
            })
        _ = s.take()
        func msg(_ id: String, _ seq: String, _ prog: Int) {
            s.record(
                s.machine.message(
                    MessageRequest(requestId: id, message: "m", sequence: seq, progressive: prog),
                    origin: .webSocket(SessionScript.stream), now: s.now))
        }
        // Progressive 1 is missing: these wait.
        msg("1", "A", 3)
        msg("2", "A", 4)
        msg("3", "A", 5)
        #expect(s.take() == ["REQOK,1", "REQOK,2", "REQERR,3,65,Too many messages waiting in this session (at most 2)"])
        // The next expected one is always taken, even at the bound.
        msg("4", "A", 1)
        #expect(s.take() == ["REQOK,4"])
        msg("5", "B", 1)
        #expect(s.take() == ["REQOK,5"])
        msg("6", "C", 1)
        #expect(s.take() == ["REQERR,6,65,Too many message sequences in this session (at most 2)"])
    }

    @Test func queuedMPNOperations() {
        var settings = Self.settings { $0.maxQueuedMPNOperations = 1 }
        settings.mpnEnabled = true
        var s = SessionScript(settings: settings)
        _ = s.take()
        let register = ControlOperation.mpnRegister(MPNRegisterParameters(platform: .apple, applicationId: "app", deviceToken: "ab"))
        s.control(register, id: "1") // in flight
        s.control(register, id: "2") // waiting
        s.control(register, id: "3") // over the bound
        let dispatched = s.actions.filter { if case .handleMPN = $0 { true } else { false } }
        #expect(dispatched.count == 1)
        #expect(s.take().contains("REQERR,3,41,Too many MPN operations waiting in this session (at most 1)"))
    }

    @Test func undeliveredBytesEndTheSession() {
        var s = SessionScript(settings: Self.settings { $0.maxBacklogBytes = 1_000 })
        _ = s.take()
        // Unbound (the stream dropped): data piles up until the bound.
        s.record(s.machine.connectionClosed(SessionScript.stream, now: s.now))
        var n = 0
        while !s.machine.isClosed, n < 100 {
            n += 1
            s.record(
                s.machine.message(
                    MessageRequest(requestId: "\(n)", message: "m", progressive: n, ack: false),
                    origin: .webSocket(ConnectionID(9)), now: s.now))
            if case .handleMessage(let d)? = s.actions.last {
                s.record(s.machine.messageHandled(d.id, .success(String(repeating: "x", count: 100)), now: s.now))
            }
        }
        #expect(s.machine.isClosed)
        #expect(n < 15, "closed only after \(n) notifications of ~120 bytes")
        #expect(s.actions.contains(.sessionClosed(.backlogExceeded)))
    }

    @Test func occupancyCountsPerAddress() {
        var settings = SessionSettings()
        settings.maxSessions = 3
        settings.maxSessionsPerAddress = 2
        var o = SessionOccupancy()
        #expect(o.reserve(address: "a", settings: settings) == nil)
        #expect(o.reserve(address: "a", settings: settings) == nil)
        #expect(o.reserve(address: "a", settings: settings)?.code == 8)
        #expect(o.reserve(address: "b", settings: settings) == nil)
        #expect(o.reserve(address: "c", settings: settings)?.message == "Configured limit of active sessions reached")
        o.release(address: "a")
        #expect(o.reserve(address: "a", settings: settings) == nil)
        #expect(o.byAddress == ["a": 2, "b": 1])
    }
}

/// A control sent again (its answer did not come in time): official clients treat REQERR 65
/// as fatal, so the same `add` twice is acknowledged twice and subscribed once.
@Suite struct SessionResentControlTests {
    @Test func theSameAddTwiceIsAcknowledgedTwiceAndSubscribedOnce() {
        var s = SessionScript()
        _ = s.take()
        let add = ControlOperation.add(SubscribeParameters(subscriptionId: 1, mode: .merge, group: "g", schema: "s"))
        s.control(add, id: "7")
        s.control(add, id: "8")
        // The first is answered when the subscription is made; the copy at once.
        #expect(s.take() == ["REQOK,8"])
        #expect(s.actions.filter { if case .subscribe = $0 { true } else { false } }.count == 1)
        // Another subscription under the same id is still an error.
        s.control(.add(SubscribeParameters(subscriptionId: 1, mode: .merge, group: "other", schema: "s")), id: "9")
        #expect(s.take() == ["REQERR,9,65,Subscription id 1 in use"])
    }
}
