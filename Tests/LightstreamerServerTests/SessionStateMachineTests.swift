import TLCP
import Testing

@testable import LightstreamerServer

/// Scripted exchanges against the session state machine: no sockets, a fake clock.
@Suite struct SessionStateMachineTests {
    @Test func wsCreateSendsConokThenHead() {
        var s = SessionScript()
        let lines = s.take()
        #expect(lines.first == "CONOK,S1,50000,5000,*")
        #expect(Array(lines.dropFirst()) == ["SERVNAME,Lightstreamer Swift Server", "CLIENTIP,127.0.0.1", "CONS,unlimited"])
        #expect(s.armed[.keepalive] == 6_000)
        #expect(s.armed[.sync] != nil)
    }

    @Test func reduceHeadOnCreateDropsServnameClientipAndCons() {
        var s = SessionScript(create: CreateSessionRequest(stream: StreamParameters(reduceHead: true)))
        #expect(s.take() == ["CONOK,S1,50000,5000,*"])
        s.control(.constrain(maxBandwidth: .kbps(10)))
        #expect(s.take() == ["REQOK,1"])
    }

    @Test func subscribeWithAckFalseSendsNoReqokAndEncodesUnchangedFields() {
        var s = SessionScript()
        _ = s.take()
        s.subscribe(1, fields: 3, ack: false)
        #expect(s.take() == ["SUBOK,1,1,3", "CONF,1,unlimited,filtered"])
        s.update(1, ["a", "b", "c"], snapshot: true)
        s.update(1, ["a", "B", "c"])
        s.update(1, [nil, "B", ""])
        #expect(s.take() == ["U,1,1,a|b|c", "U,1,1,|B|", "U,1,1,#||$"])
        #expect(s.machine.dataNotificationCount == 5)
    }

    @Test func subscribeAckedAndRefused() {
        var s = SessionScript()
        _ = s.take()
        s.control(.add(SubscribeParameters(subscriptionId: 1, mode: .merge, group: "g", schema: "s")), id: "7")
        #expect(s.take().isEmpty)
        s.record(s.machine.subscribeFailed(1, SessionRefusal(code: 21, message: "bad, group"), now: s.now))
        #expect(s.take() == ["REQERR,7,21,bad%2C group"])
        // An error is sent even with LS_ack=false.
        s.control(.add(SubscribeParameters(subscriptionId: 2, mode: .merge, group: "g", schema: "s")), id: "8", ack: false)
        s.record(s.machine.subscribeFailed(2, SessionRefusal(code: -3, message: "no"), now: s.now))
        #expect(s.take() == ["REQERR,8,-3,no"])
    }

    @Test func eventsBeforeTheSubscriptionIsConfirmedWaitForSubok() {
        var s = SessionScript()
        _ = s.take()
        s.control(.add(SubscribeParameters(subscriptionId: 1, mode: .distinct, group: "g", schema: "s")), ack: false)
        s.update(1, ["x"], snapshot: true)
        s.record(s.machine.tableEvent(1, .endOfSnapshot(item: 1), now: s.now))
        #expect(s.take().isEmpty)
        s.record(s.machine.subscribeSucceeded(1, grant: SubscriptionGrant(itemCount: 1, fieldCount: 1), now: s.now))
        #expect(s.take() == ["SUBOK,1,1,1", "CONF,1,unlimited,filtered", "U,1,1,x", "EOS,1,1"])
    }

    @Test func commandSubscriptionAnswersSubcmd() {
        var s = SessionScript()
        _ = s.take()
        s.subscribe(3, mode: .command, fields: 4, ack: false, key: 1, command: 2)
        #expect(s.take().first == "SUBCMD,3,1,4,1,2")
    }

    @Test func deleteAnswersReqokThenUnsubAfterTheEngine() {
        var s = SessionScript()
        _ = s.take()
        s.subscribe(1, ack: false)
        _ = s.take()
        s.control(.delete(subscriptionId: 1), id: "2")
        #expect(s.take() == ["REQOK,2"])
        #expect(s.actions.contains(.unsubscribe(subscriptionId: 1)))
        s.update(1, ["late", "x"])
        s.record(s.machine.unsubscribed(1, now: s.now))
        #expect(s.take() == ["U,1,1,late|x", "UNSUB,1"])
        s.control(.delete(subscriptionId: 1), id: "3")
        #expect(s.take() == ["REQERR,3,19,Subscription 1 not found"])
    }

    @Test func httpPollingCreateAnswersConokAndLoop() {
        let conn = ConnectionID(9)
        var s = SessionScript(
            create: CreateSessionRequest(stream: StreamParameters(polling: true, pollingMillis: 0, idleMillis: 0)),
            transport: .http, connection: conn)
        let lines = s.take(conn)
        #expect(lines.first == "CONOK,S1,50000,0,*")
        #expect(lines.last == "LOOP,0")
        #expect(s.ended[conn] == false)
        #expect(!s.machine.isBound)
        #expect(s.armed[.unboundTimeout] != nil)
        #expect(s.armed[.keepalive] == nil)
    }

    @Test func pollWaitsForDataThenEndsWithLoop() {
        let create = ConnectionID(9)
        var s = SessionScript(
            create: CreateSessionRequest(stream: StreamParameters(polling: true, idleMillis: 0)),
            transport: .http, connection: create)
        _ = s.take(create)
        let poll = ConnectionID(10)
        s.bind(StreamParameters(polling: true, pollingMillis: 100, idleMillis: 19_000), on: poll)
        #expect(
            s.take(poll) == [
                "CONOK,S1,50000,19000,*", "SERVNAME,Lightstreamer Swift Server", "CLIENTIP,127.0.0.1",
                "CONS,unlimited",
            ])
        #expect(s.armed[.pollIdle] == s.now + 19_000)
        s.subscribe(1, fields: 1)
        let lines = s.take(poll)
        #expect(lines == ["SUBOK,1,1,1", "LOOP,100"])
        #expect(s.httpReplies.isEmpty)
        // The next poll gets CONF, which was held while unbound.
        let poll2 = ConnectionID(11)
        s.bind(StreamParameters(polling: true, pollingMillis: 100, idleMillis: 19_000), on: poll2)
        #expect(s.take(poll2).suffix(2) == ["CONF,1,unlimited,filtered", "LOOP,100"])
        // An empty poll answers after the idle time.
        let poll3 = ConnectionID(12)
        s.bind(StreamParameters(polling: true, pollingMillis: 0, idleMillis: 500), on: poll3)
        _ = s.take(poll3)
        s.advance(499)
        #expect(s.take(poll3).isEmpty)
        s.advance(1)
        #expect(s.take(poll3) == ["LOOP,0"])
        // No PROBE or SYNC on polls.
        #expect(!s.actions.contains(.armTimer(.sync, atMillis: s.now)))
    }

    @Test func streamingBindLoopsWhenTheContentLengthRunsOut() {
        let create = ConnectionID(9)
        var s = SessionScript(
            create: CreateSessionRequest(supportedDiffs: [], stream: StreamParameters(polling: true)),
            transport: .http, connection: create)
        let stream = ConnectionID(10)
        s.bind(StreamParameters(contentLength: 1_000, sendSync: false), on: stream)
        _ = s.take(stream)
        s.subscribe(1, fields: 1)
        var count = 0
        while s.machine.isBound, count < 1_000 {
            s.update(1, ["value-\(count)"])
            count += 1
        }
        let lines = s.take(stream)
        #expect(lines.last == "LOOP,0")
        #expect(s.ended[stream] == false)
        #expect(lines.joined(separator: "\r\n").utf8.count <= 1_000)
        // A rebind continues where the stream stopped: nothing lost, nothing repeated.
        let next = ConnectionID(11)
        s.bind(StreamParameters(contentLength: 100_000, sendSync: false), on: next)
        let updates = s.take(next).filter { $0.hasPrefix("U,") }
        #expect(updates.count == 1)
        #expect(updates.first == "U,1,1,value-\(count - 1)")
    }

    /// With no bandwidth limit the stream takes its lines in runs (`NotificationLog.run`); a
    /// limit so high it never holds a line back takes the path that checks line by line. Both
    /// must write the same lines, and loop at the same one when the content length runs out.
    @Test(arguments: [nil, 20_000] as [Int?])
    func linesGoOutInRunsExactlyAsLineByLine(contentLength: Int?) {
        // Lines up to 1.3 KB, so that runs end where log pages do.
        let written = Self.runsAndLineByLine(contentLength: contentLength, updates: 600) { i in
            String(repeating: "w", count: (i * 67) % 1_300)
        }
        if contentLength != nil {
            #expect(written.last == "LOOP,0")
        } else {
            #expect(written.filter { $0.hasPrefix("U,") }.count == 600)
        }
    }

    /// The same at every content length over a range of 400 bytes, with short lines: the stream
    /// loops at the same line whichever byte its content length ends on.
    @Test func runsLoopWhereLineByLineLoopsAtEveryContentLength() {
        for contentLength in 1_000...1_400 {
            let written = Self.runsAndLineByLine(contentLength: contentLength, updates: 80) { i in
                String(repeating: "v", count: (i * 13) % 41)
            }
            #expect(written.last == "LOOP,0")
        }
    }

    /// Feeds the same updates (and some `OV` lines) in batches to an HTTP stream of each kind,
    /// expects the same lines and the same end on both, and returns the lines.
    private static func runsAndLineByLine(contentLength: Int?, updates: Int, wide: (Int) -> String) -> [String] {
        let stream = ConnectionID(10)
        func script(kbps: Double?) -> SessionScript {
            var s = SessionScript(
                create: CreateSessionRequest(
                    requestedMaxBandwidth: kbps.map { .kbps($0) }, supportedDiffs: [], stream: StreamParameters(polling: true)),
                transport: .http, connection: ConnectionID(9))
            s.bind(StreamParameters(contentLength: contentLength, sendSync: false), on: stream)
            // The bandwidth limiter starts empty: a millisecond fills it with 12.5 MB.
            s.advance(1)
            s.subscribe(1, items: 3, fields: 2, ack: false)
            return s
        }
        var runs = script(kbps: nil)
        var lineByLine = script(kbps: 1e8)
        var events: [(subscriptionId: Int, event: TableEvent)] = []
        for i in 0..<updates {
            events.append((1, .update(item: i % 3 + 1, values: ["\(i)", wide(i)], isSnapshot: false)))
            if i % 89 == 0 { events.append((1, .overflow(item: i % 3 + 1, lost: i + 1))) }
        }
        for chunk in stride(from: 0, to: events.count, by: 50) {
            let batch = Array(events[chunk..<min(chunk + 50, events.count)])
            runs.record(runs.machine.tableEvents(batch, now: runs.now))
            lineByLine.record(lineByLine.machine.tableEvents(batch, now: lineByLine.now))
        }
        let written = runs.take(stream).filter { !$0.hasPrefix("CONS,") }
        let reference = lineByLine.take(stream).filter { !$0.hasPrefix("CONS,") }
        let firstDifference =
            zip(written, reference).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(written.count, reference.count)
        #expect(
            written == reference,
            "content length \(contentLength ?? 0): \(written.count) and \(reference.count) lines, first difference at \(firstDifference)")
        #expect(runs.ended[stream] == lineByLine.ended[stream])
        return written
    }

    /// A client's huge requested bandwidth (29 digits, which requests may carry) is granted in
    /// a `CONS` of plain digits that clients read, not as `7.777777777777778e+27`.
    @Test func aHugeRequestedBandwidthIsGrantedInPlainDigits() throws {
        let requested = try #require(RequestedBandwidth(wireValue: "07777777777777777777777777777"))
        var s = SessionScript(create: CreateSessionRequest(requestedMaxBandwidth: requested, stream: StreamParameters(sendSync: false)))
        let cons = try #require(s.take().first { $0.hasPrefix("CONS,") })
        #expect(cons == "CONS,7777777777777778000000000000")
        #expect(try TLCPNotification.parse(cons) == .cons(.kbps(7.777777777777778e27)))
    }

    @Test func keepaliveProbesOnlyAfterSilence() {
        var s = SessionScript(create: CreateSessionRequest(stream: StreamParameters(keepaliveMillis: 2_000, sendSync: false)))
        _ = s.take()
        s.advance(1_500)
        s.subscribe(1, fields: 1, ack: false)
        s.advance(600)
        #expect(s.take() == ["SUBOK,1,1,1", "CONF,1,unlimited,filtered"])
        s.advance(1_500)
        #expect(s.take() == ["PROBE"])
        s.advance(2_000)
        #expect(s.take() == ["PROBE"])
    }

    /// What a stream sent is dropped from the log once out of the recovery window even when
    /// no more data comes (or the session is held behind a full socket): on the keepalive.
    @Test func aSilentStreamsLogIsPrunedOnTheKeepalive() {
        var settings = SessionScript.settings
        settings.recoveryWindowMillis = 2_000
        var s = SessionScript(
            create: CreateSessionRequest(stream: StreamParameters(keepaliveMillis: 5_000, sendSync: false)), settings: settings)
        _ = s.take()
        s.subscribe(1, fields: 1, ack: false)
        for i in 0..<10 { s.update(1, ["\(i)"]) }
        #expect(s.take().count == 12, "SUBOK, CONF and ten updates")
        #expect(s.machine.log.count == 12, "sent (SUBOK and CONF count too), and within the window")
        s.advance(5_500)
        #expect(s.take() == ["PROBE"])
        #expect(s.machine.log.count == 0, "5 s old, out of the 2 s window")
    }

    @Test func keepaliveIsClamped() {
        var s = SessionScript(create: CreateSessionRequest(stream: StreamParameters(keepaliveMillis: 10)))
        #expect(s.take().first == "CONOK,S1,50000,1000,*")
    }

    @Test func syncIsSentUnlessTurnedOff() {
        var s = SessionScript()
        _ = s.take()
        s.advance(30_000)
        #expect(s.take().contains("SYNC,30"))
        var off = SessionScript(create: CreateSessionRequest(stream: StreamParameters(sendSync: false)))
        _ = off.take()
        off.advance(60_000)
        #expect(!off.take().contains { $0.hasPrefix("SYNC") })
    }

    @Test func recoveryReplaysFromTheRequestedProgressive() {
        var s = SessionScript(create: CreateSessionRequest(stream: StreamParameters(sendSync: false)))
        _ = s.take()
        s.subscribe(1, fields: 1, ack: false)
        for i in 1...5 { s.update(1, ["v\(i)"]) }
        // SUBOK, CONF, 5 U = 7 data notifications; the client got only 4 before the drop.
        _ = s.take()
        s.record(s.machine.connectionClosed(SessionScript.stream, now: s.now))
        #expect(!s.machine.isBound)
        s.update(1, ["v6"])
        let recovery = ConnectionID(20)
        s.bind(StreamParameters(polling: true, pollingMillis: 0, idleMillis: 0), recoveryFrom: 4, on: recovery)
        let lines = s.take(recovery)
        #expect(lines.first?.hasPrefix("CONOK,S1") == true)
        #expect(lines.contains("PROG,4"))
        #expect(lines.filter { $0.hasPrefix("U,") } == ["U,1,1,v3", "U,1,1,v4", "U,1,1,v5", "U,1,1,v6"])
        #expect(lines.last == "LOOP,0")
        let prog = lines.firstIndex(of: "PROG,4") ?? 99
        let firstU = lines.firstIndex { $0.hasPrefix("U,") } ?? -1
        #expect(prog < firstU)
    }

    @Test func recoveryFailsWithConerr4WhenTheDataIsGone() {
        var settings = SessionScript.settings
        settings.recoveryWindowMillis = 1_000
        settings.recoveryMaxNotifications = 2
        var s = SessionScript(create: CreateSessionRequest(stream: StreamParameters(sendSync: false)), settings: settings)
        s.subscribe(1, fields: 1, ack: false)
        for i in 1...5 { s.update(1, ["v\(i)"]) }
        s.now += 5_000
        s.update(1, ["v6"])
        s.record(s.machine.connectionClosed(SessionScript.stream, now: s.now))
        let recovery = ConnectionID(20)
        s.bind(StreamParameters(polling: true), recoveryFrom: 1, on: recovery)
        #expect(s.take(recovery) == ["CONERR,4,Recovery not possible from 1"])
        // Asking for more than was ever sent fails too.
        s.bind(StreamParameters(polling: true), recoveryFrom: 100, on: ConnectionID(21))
        #expect(s.take(ConnectionID(21)).first?.hasPrefix("CONERR,4") == true)
    }

    @Test func unboundSessionTimesOut() {
        var s = SessionScript()
        s.record(s.machine.connectionClosed(SessionScript.stream, now: s.now))
        s.advance(Int64(SessionScript.settings.sessionRecoveryMillis) - 1)
        #expect(!s.machine.isClosed)
        s.advance(1)
        #expect(s.machine.isClosed)
        #expect(s.actions.contains(.sessionClosed(.timedOut)))
    }

    @Test func destroyEndsWithCustomCodes() {
        var s = SessionScript()
        _ = s.take()
        s.subscribe(1, ack: false)
        _ = s.take()
        s.control(.destroy(causeCode: 5, causeMessage: "bye", closeSocket: true), id: "9")
        #expect(s.take() == ["REQOK,9", "END,0,bye"])
        #expect(s.ended[SessionScript.stream] == true)
        #expect(s.machine.isClosed)
        #expect(s.actions.contains(.unsubscribe(subscriptionId: 1)))

        var t = SessionScript()
        _ = t.take()
        t.control(.destroy(causeCode: -7, causeMessage: nil, closeSocket: nil))
        #expect(t.take() == ["REQOK,1", "END,-7,null"])
        var u = SessionScript()
        _ = u.take()
        u.control(.destroy(causeCode: nil, causeMessage: nil, closeSocket: nil))
        #expect(u.take().last?.hasPrefix("END,31,") == true)
        var v = SessionScript()
        _ = v.take()
        v.control(.destroy(causeCode: -1, causeMessage: "line\nbreak", closeSocket: nil))
        #expect(v.take().last == "END,-1,[Custom message skipped]")
    }

    @Test func comboFailureAnswersConerr64() {
        let conn = ConnectionID(5)
        let add = ControlOperation.add(SubscribeParameters(subscriptionId: 1, mode: .merge, group: "g", schema: "s"))
        var s = SessionScript(create: CreateSessionRequest(comboOperations: [add]), connection: conn)
        #expect(s.take(conn).isEmpty)
        s.record(s.machine.subscribeFailed(1, SessionRefusal(code: 21, message: "bad"), now: s.now))
        #expect(s.take(conn) == ["CONERR,64,bad"])
        #expect(s.machine.isClosed)

        var ok = SessionScript(create: CreateSessionRequest(comboOperations: [add]), connection: conn)
        ok.record(ok.machine.subscribeSucceeded(1, grant: SubscriptionGrant(itemCount: 1, fieldCount: 1), now: ok.now))
        let lines = ok.take(conn)
        #expect(lines.first == "CONOK,S1,50000,5000,*")
        #expect(lines.suffix(2) == ["SUBOK,1,1,1", "CONF,1,unlimited,filtered"])
    }

    @Test func forceRebindLoops() {
        var s = SessionScript()
        _ = s.take()
        s.control(.forceRebind(pollingMillis: 200, closeSocket: true), id: "4")
        #expect(s.take() == ["REQOK,4", "LOOP,200"])
        #expect(s.ended[SessionScript.stream] == true)
        #expect(!s.machine.isBound)
    }

    @Test func constrainSendsConsAndLimitsTheBandwidth() {
        var s = SessionScript(create: CreateSessionRequest(stream: StreamParameters(sendSync: false)))
        _ = s.take()
        s.subscribe(1, fields: 1, ack: false)
        s.control(.constrain(maxBandwidth: .kbps(0.8)), id: "5") // 100 bytes/s
        #expect(s.take().suffix(2) == ["REQOK,5", "CONS,0.8"])
        let value = String(repeating: "x", count: 40)
        for _ in 0..<5 {
            s.update(1, [value + "\(s.now)"])
            s.now += 1
        }
        let first = s.take().count
        #expect(first < 5)
        #expect(s.armed[.bandwidth] != nil)
        s.advance(3_000)
        #expect(first + s.take().count == 5)
    }

    @Test func bandwidthIsCappedByTheMetadataAdapter() {
        var s = SessionScript(allowedMaxBandwidth: 20)
        #expect(s.take().contains("CONS,20"))
        s.control(.constrain(maxBandwidth: .kbps(50)), id: "2")
        #expect(s.take().contains("CONS,20"))
        s.control(.constrain(maxBandwidth: .kbps(5)), id: "3")
        #expect(s.take().contains("CONS,5"))
    }

    @Test func reconfSendsConfAndRefusesUnfiltered() {
        var s = SessionScript()
        _ = s.take()
        s.subscribe(1, ack: false)
        _ = s.take()
        s.control(.reconf(subscriptionId: 1, maxFrequency: .limited(2)), id: "6")
        #expect(s.actions.contains(.reconfigure(subscriptionId: 1, .limited(2))))
        s.record(s.machine.reconfigured(1, .success(.limited(2)), now: s.now))
        #expect(s.take() == ["REQOK,6", "CONF,1,2,filtered"])
        s.control(
            .add(SubscribeParameters(subscriptionId: 2, mode: .merge, group: "g", schema: "s", maxFrequency: .unfiltered)),
            ack: false)
        s.record(s.machine.subscribeSucceeded(2, grant: SubscriptionGrant(itemCount: 1, fieldCount: 1, filtered: false), now: s.now))
        _ = s.take()
        s.control(.reconf(subscriptionId: 2, maxFrequency: .limited(1)), id: "7")
        #expect(s.take() == ["REQERR,7,13,Subscription 2 is unfiltered"])
    }

    @Test func httpControlsAreAnsweredInTheirResponse() {
        var s = SessionScript()
        _ = s.take()
        let ctrl = ConnectionID(30)
        s.control(.constrain(maxBandwidth: nil), id: "1", ack: false, origin: .http(ctrl, index: 0))
        s.control(.delete(subscriptionId: 9), id: "2", origin: .http(ctrl, index: 1))
        #expect(s.httpReplies[ctrl]?[0] == .some("REQOK,1"))
        #expect(s.httpReplies[ctrl]?[1] == .some("REQERR,2,19,Subscription 9 not found"))
        s.record(s.machine.heartbeat(origin: .http(ctrl, index: 2), now: s.now))
        #expect(s.httpReplies[ctrl]?[2] == .some("REQOK"))
    }

    @Test func mpnOperationsAreRefusedWithoutTheModule() {
        var s = SessionScript()
        _ = s.take()
        s.control(.mpnResetBadge(deviceId: "d"), id: "3")
        #expect(s.take() == ["REQERR,3,40,MPN Module disabled"])
    }

    @Test func inactivityClosesTheStream() {
        var s = SessionScript(create: CreateSessionRequest(stream: StreamParameters(inactivityMillis: 1_000, sendSync: false)))
        _ = s.take()
        s.advance(2_500)
        s.record(s.machine.heartbeat(origin: .webSocket(SessionScript.stream), now: s.now))
        s.advance(2_999)
        #expect(s.machine.isBound)
        s.advance(10)
        #expect(!s.machine.isBound)
        #expect(s.ended[SessionScript.stream] == true)
    }

    @Test func bindOfAnotherVersionIsRefused() {
        var s = SessionScript()
        s.bind(StreamParameters(), on: ConnectionID(40), version: .v2_4)
        #expect(s.take(ConnectionID(40)).first?.hasPrefix("CONERR,3,") == true)
    }

    @Test func reduceHeadOnBindSendsNoConok() {
        var s = SessionScript(
            create: CreateSessionRequest(stream: StreamParameters(polling: true)), transport: .http,
            connection: ConnectionID(2))
        s.bind(StreamParameters(sendSync: false, reduceHead: true), on: ConnectionID(3))
        #expect(s.take(ConnectionID(3)) == ["CONS,unlimited"])
    }

    @Test func dropOfTheLastPollSocketExtendsTheWait() {
        var s = SessionScript(
            create: CreateSessionRequest(stream: StreamParameters(polling: true)), transport: .webSocket,
            connection: ConnectionID(2))
        let clean = s.armed[.unboundTimeout]
        #expect(clean == s.now + Int64(SessionScript.settings.sessionTimeoutMillis))
        s.record(s.machine.connectionClosed(ConnectionID(2), now: s.now))
        #expect(s.armed[.unboundTimeout] == s.now + Int64(SessionScript.settings.sessionRecoveryMillis))
    }

    @Test func diffsOnlyFor24AndLater() {
        let long1 = "{\"price\":\"100.25\",\"name\":\"a long enough json value\"}"
        let long2 = "{\"price\":\"100.50\",\"name\":\"a long enough json value\"}"
        var old = SessionScript(version: .v2_3)
        _ = old.take()
        old.subscribe(1, fields: 1, ack: false)
        old.update(1, [long1])
        old.update(1, [long2])
        #expect(old.take().last?.contains("^") == false)
        var new = SessionScript(version: .v2_5)
        _ = new.take()
        new.subscribe(1, fields: 1, ack: false)
        new.update(1, [long1])
        new.update(1, [long2])
        #expect(new.take().last?.hasPrefix("U,1,1,^") == true)
    }

    @Test func aNewBindTakesTheSessionOver() {
        var s = SessionScript()
        _ = s.take()
        s.bind(StreamParameters(sendSync: false), on: ConnectionID(50))
        #expect(s.ended[SessionScript.stream] == true)
        #expect(s.machine.boundConnection == ConnectionID(50))
        #expect(s.take().isEmpty)
    }
}
