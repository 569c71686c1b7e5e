import ARI
import Testing

@testable import LightstreamerServer

/// The proxy side of one remote adapter connection against scripted remotes (no sockets).
@Suite struct RemoteConnectionStateMachineTests {
    typealias Machine = RemoteConnectionStateMachine<Int>
    typealias Action = RemoteConnectionAction<Int>

    static let metadata = RemoteConnectionConfiguration(
        role: .metadata, adapterSet: "DEMO", keepaliveHintMillis: 3000,
        parameters: [ARIPair("remote:color", "blue")],
        requestTimeoutMillis: 1000, handshakeTimeoutMillis: 5000)

    /// Actions without the log lines.
    static func effects(_ actions: [Action]) -> [Action] {
        actions.filter { if case .log = $0 { false } else { true } }
    }

    static func logs(_ actions: [Action], _ level: RemoteLogLevel) -> [String] {
        actions.compactMap { if case .log(level, let text) = $0 { text } else { nil } }
    }

    /// A metadata connection that finished its handshake with a Python (1.8.3) remote.
    static func readyMachine(_ config: RemoteConnectionConfiguration = metadata) -> Machine {
        var m = Machine(configuration: config)
        _ = m.connected(now: 0)
        _ = m.received(.success("1|RAC|S|enableClosePacket|S|true|S|SDK|S|Python+Adapter+SDK"), now: 1)
        _ = m.received(.success("10|MPI|S|ARI.version|S|1.8.3"), now: 2)
        return m
    }

    @Test func pythonHandshakeWithoutCredentials() {
        var m = Machine(configuration: Self.metadata)
        #expect(
            m.connected(now: 0) == [
                .write(
                    "10|MPI|S|ARI.version|S|1.9.1|S|keepalive_hint.millis|S|3000|S|adapters_conf.id|S|DEMO|S|remote%3Acolor|S|blue")
            ])
        #expect(m.nextWakeup == 5000)
        #expect(m.received(.success("1|RAC|S|enableClosePacket|S|true|S|SDK|S|Python+Adapter+SDK"), now: 1) == [])
        #expect(m.received(.success("KEEPALIVE"), now: 2) == [])
        let ready = m.received(.success("10|MPI|S|ARI.version|S|1.8.3"), now: 3)
        #expect(Self.effects(ready) == [.ready(version: ARIVersion(1, 8, 3), dialect: .v1_8, sdk: "Python Adapter SDK")])
        #expect(m.isReady && m.dialect == .v1_8)
        #expect(m.nextWakeup == nil)
    }

    @Test func dataInitNamesTheDataAdapter() {
        var m = Machine(configuration: RemoteConnectionConfiguration(role: .data(name: "QUOTES"), adapterSet: "DEMO"))
        #expect(m.connected(now: 0) == [.write("10|DPI|S|ARI.version|S|1.9.1|S|adapters_conf.id|S|DEMO|S|data_provider.name|S|QUOTES")])
        #expect(
            Self.effects(m.received(.success("10|DPI|S|ARI.version|S|1.9.1"), now: 1))
                == [.ready(version: ARIVersion(1, 9, 1), dialect: .v1_9, sdk: nil)])
    }

    @Test func credentialsAreCheckedBeforeTheInit() {
        var config = Self.metadata
        config.credentials = RemoteCredentials(user: "rmt", password: "s3cret&|x")
        var good = Machine(configuration: config)
        #expect(good.connected(now: 0) == [])
        let out = good.received(.success("1|RAC|S|user|S|rmt|S|password|S|s3cret%26%7Cx|S|enableClosePacket|S|true"), now: 1)
        guard case .write(let line)? = out.first else {
            Issue.record("the init should go out: \(out)")
            return
        }
        #expect(line.hasPrefix("10|MPI|"))

        var bad = Machine(configuration: config)
        _ = bad.connected(now: 0)
        let refused = bad.received(.success("1|RAC|S|user|S|rmt|S|password|S|guess|S|enableClosePacket|S|true"), now: 1)
        #expect(
            Self.effects(refused) == [
                .write("0|CLOSE|S|reason|S|remote%20credentials%20refused%20%28user%20rmt%29"), .closeConnection,
            ])
        #expect(Self.logs(refused, .error).count == 1)
        #expect(bad.isClosed)
        #expect(bad.received(.success("KEEPALIVE"), now: 2) == [])
    }

    @Test func aRemoteWithoutClosePacketIsJustDisconnected() {
        var config = Self.metadata
        config.credentials = RemoteCredentials(user: "a", password: "b")
        var m = Machine(configuration: config)
        _ = m.connected(now: 0)
        #expect(Self.effects(m.received(.success("1|RAC|S|user|S|a|S|password|S|c"), now: 1)) == [.closeConnection])
    }

    @Test func versionsOutsideTheRangeOrARefusedInitClose() {
        for reply in [
            "10|MPI|S|ARI.version|S|2.0.0", "10|MPI|S|ARI.version|S|1.7.9", "10|MPI|S|ARI.version|S|junk",
            "10|MPI|EM|bad+params", "10|MPI|E|Unsupported+protocol+version", "10|MPI|I|3",
        ] {
            var m = Machine(configuration: Self.metadata)
            _ = m.connected(now: 0)
            let out = m.received(.success(reply), now: 1)
            #expect(Self.effects(out).last == .closeConnection, "\(reply)")
            #expect(m.isClosed, "\(reply)")
        }
        // A bare V is a 1.8.0 remote: accepted, but it cannot take CLOSE.
        var old = Machine(configuration: Self.metadata)
        _ = old.connected(now: 0)
        #expect(
            Self.effects(old.received(.success("10|MPI|V"), now: 1)) == [.ready(version: ARIVersion(1, 8, 0), dialect: .v1_8, sdk: nil)])
        #expect(Self.effects(old.close(reason: "bye")) == [.closeConnection])
    }

    @Test func theHandshakeHasADeadline() {
        var m = Machine(configuration: Self.metadata)
        _ = m.connected(now: 100)
        #expect(m.nextWakeup == 5100)
        #expect(m.timerFired(now: 5099) == [])
        #expect(Self.effects(m.timerFired(now: 5100)) == [.closeConnection])
        #expect(m.isClosed && m.nextWakeup == nil)
    }

    @Test func requestsAreMatchedToTheirReplies() {
        var m = Self.readyMachine()
        #expect(
            m.send(.notifyUser(user: "user1", password: "pw", headers: [ARIPair("REQUEST_ID", "1")]), context: 7, now: 10)
                == [.write("11|NUS|S|user1|S|pw|S|REQUEST_ID|S|1")])
        #expect(
            m.send(.getItems(user: "user1", group: "a b", sessionId: "S1"), context: 8, now: 10)
                == [.write("12|GIS|S|user1|S|a%20b|S|S1")])
        // Replies in any order.
        #expect(m.received(.success("12|GIS|S|a|S|b"), now: 11) == [.completed(8, .success(.names(["a", "b"])))])
        #expect(
            m.received(.success("11|NUS|EC|refused|-5|No+way"), now: 12)
                == [.completed(7, .failure(.refused(.credits(message: "refused", code: -5, userMessage: "No way"))))])
        #expect(Self.effects(m.received(.success("11|NUS|D|0|B|0"), now: 13)) == [])
    }

    @Test func aRequestWithoutReplyTimesOutAndItsLateReplyIsIgnored() {
        var m = Self.readyMachine()
        _ = m.send(.notifyUserMessage(user: nil, sessionId: "S1", message: "hi"), context: 1, now: 100)
        #expect(m.nextWakeup == 1100)
        #expect(Self.effects(m.timerFired(now: 1099)) == [])
        #expect(Self.effects(m.timerFired(now: 1100)) == [.completed(1, .failure(.timedOut))])
        let late = m.received(.success("11|NUM|V"), now: 1200)
        #expect(Self.effects(late) == [] && Self.logs(late, .info).count == 1)
    }

    @Test func requestsCannotGoOutBeforeReadyOrBeyondTheBound() {
        var m = Machine(configuration: Self.metadata)
        _ = m.connected(now: 0)
        #expect(m.send(.notifySessionClose(sessionId: "S"), context: 1, now: 0) == [.completed(1, .failure(.unavailable))])
        var config = Self.metadata
        config.maxPendingRequests = 1
        var small = Self.readyMachine(config)
        _ = small.send(.notifySessionClose(sessionId: "S"), context: 1, now: 0)
        #expect(small.send(.notifySessionClose(sessionId: "T"), context: 2, now: 0) == [.completed(2, .failure(.overloaded))])
    }

    @Test func anUnreadableReplyFailsItsRequestAtOnce() {
        var m = Self.readyMachine()
        _ = m.send(.getItemData(items: ["a"]), context: 3, now: 0)
        let out = m.received(.success("11|GIT|I|x|D|0|M|R"), now: 1)
        guard case .completed(3, .failure(.malformedReply))? = Self.effects(out).first else {
            Issue.record("expected a malformed reply: \(out)")
            return
        }
        #expect(Self.logs(out, .warning).count == 1)
        // Garbage that names no request is only logged.
        #expect(Self.effects(m.received(.success("zz|??|%%"), now: 2)) == [])
        #expect(Self.effects(m.received(.failure(.lineTooLong(limit: 10)), now: 2)) == [])
    }

    @Test func dataNotificationsFlowOnlyOnAReadyDataConnection() {
        var config = RemoteConnectionConfiguration(role: .data(name: "DEFAULT"), adapterSet: "DEMO")
        config.requestTimeoutMillis = 1000
        var m = Machine(configuration: config)
        _ = m.connected(now: 0)
        let early = m.received(.success("1|EOS|S|feed1|S|31"), now: 1)
        #expect(Self.effects(early) == [] && Self.logs(early, .warning).count == 1)
        _ = m.received(.success("10|DPI|S|ARI.version|S|1.8.3"), now: 2)
        #expect(m.send(.subscribe(item: "feed1"), context: 1, now: 3) == [.write("11|SUB|S|feed1")])
        let update = "1795466804311|UD3|S|feed1|S|11|B|1|S|bid|S|1.0|S|raw|Y|AP8="
        guard case .dataNotification(.update(let u))? = m.received(.success(update), now: 4).first else {
            Issue.record("expected the update")
            return
        }
        #expect(u.fieldMap == ["bid": "1.0", "raw": "\u{0}ÿ"])
        #expect(m.received(.success("11|SUB|V"), now: 5) == [.completed(1, .success(.void))])
        #expect(Self.effects(m.received(.success("1|FAL|E|feed+down"), now: 6)) == [.remoteFailure("feed down")])
        // On a metadata connection the same lines are ignored.
        var meta = Self.readyMachine()
        #expect(Self.effects(meta.received(.success("1|CLS|S|feed1|S|31"), now: 3)) == [])
    }

    @Test func silenceBeyondTheInactivityLimitCloses() {
        var config = Self.metadata
        config.inactivityTimeoutMillis = 1000
        var m = Self.readyMachine(config)
        #expect(m.nextWakeup == 1002)
        _ = m.received(.success("KEEPALIVE"), now: 900)
        #expect(m.nextWakeup == 1900)
        #expect(Self.effects(m.timerFired(now: 1500)) == [])
        _ = m.send(.notifySessionClose(sessionId: "S"), context: 4, now: 1500)
        #expect(
            Self.effects(m.timerFired(now: 1900)) == [
                .write("0|CLOSE|S|reason|S|no%20line%20from%20the%20remote%20for%201000%20ms"), .closeConnection,
                .completed(4, .failure(.unavailable)),
            ])
    }

    @Test func closingAndLosingTheConnectionFailWaitingRequests() {
        var m = Self.readyMachine()
        _ = m.send(.notifySessionClose(sessionId: "S"), context: 1, now: 0)
        #expect(
            Self.effects(m.close(reason: "server shutting down")) == [
                .write("0|CLOSE|S|reason|S|server%20shutting%20down"), .closeConnection, .completed(1, .failure(.unavailable)),
            ])
        #expect(m.close(reason: "again") == [])
        var lost = Self.readyMachine()
        _ = lost.send(.notifySessionClose(sessionId: "S"), context: 2, now: 0)
        #expect(Self.effects(lost.connectionLost()) == [.completed(2, .failure(.unavailable))])
        #expect(lost.send(.notifySessionClose(sessionId: "S"), context: 3, now: 1) == [.completed(3, .failure(.unavailable))])
    }
}
