import TLCP
import Testing

@testable import LightstreamerServer

/// A session without a stream keeps one row per item of its MERGE subscriptions
/// (`SessionStateMachine+Held.swift`); what a later stream gets must be what a session that
/// was bound all along would have sent for the same latest values.
@Suite struct SessionUnboundFoldingTests {
    static let noSync = CreateSessionRequest(stream: StreamParameters(sendSync: false))
    static let recovery = ConnectionID(20)

    /// A stream session with `subscriptions` subscribed (id, parameters, items, fields); set-up taken.
    static func session(_ subscriptions: [(SubscribeParameters, items: Int, fields: Int)]) -> SessionScript {
        var s = SessionScript(create: noSync)
        for (p, items, fields) in subscriptions {
            s.control(.add(p), id: "r\(p.subscriptionId)", ack: false)
            s.record(
                s.machine.subscribeSucceeded(
                    p.subscriptionId, grant: SubscriptionGrant(itemCount: items, fieldCount: fields), now: s.now))
        }
        _ = s.take()
        return s
    }

    static func merge(
        _ id: Int, maxFrequency: RequestedFrequency? = nil, buffer: RequestedBufferSize? = nil
    )
        -> SubscribeParameters
    {
        SubscribeParameters(
            subscriptionId: id, mode: .merge, group: "g", schema: "s", bufferSize: buffer, maxFrequency: maxFrequency)
    }

    /// Data notifications the client got before its stream dropped: everything written so far.
    static func dropAfterEverythingSent(_ s: inout SessionScript) -> Int {
        let sent = s.machine.log.lastProgressive
        s.record(s.machine.connectionClosed(SessionScript.stream, now: s.now))
        #expect(!s.machine.isBound)
        return sent
    }

    static func recover(_ s: inout SessionScript, from: Int) -> [String] {
        s.bind(StreamParameters(sendSync: false), recoveryFrom: from, on: recovery, transport: .webSocket)
        return s.take(recovery).filter {
            !$0.hasPrefix("CONOK") && !$0.hasPrefix("SERVNAME") && !$0.hasPrefix("CLIENTIP") && !$0.hasPrefix("CONS")
                && !$0.hasPrefix("PROG")
        }
    }

    @Test func mergeUpdatesFoldToWhatABoundSessionSendsForTheLatestRows() {
        var s = Self.session([(Self.merge(1), items: 3, fields: 3)])
        s.update(1, item: 1, ["a", "x", "k"])
        s.update(1, item: 2, ["p", "q", "k"])
        let sent = Self.dropAfterEverythingSent(&s)
        for i in 0..<500 {
            s.update(1, item: 1, ["b\(i)", i % 2 == 0 ? "x" : "y", "k"])
            s.update(1, item: 3, ["n\(i)", nil, "k"])
        }
        s.update(1, item: 2, ["p", "q2", "k"])
        let got = Self.recover(&s, from: sent)

        // The reference: bound all along, it gets only the rows the held session ends with.
        var reference = Self.session([(Self.merge(1), items: 3, fields: 3)])
        reference.update(1, item: 1, ["a", "x", "k"])
        reference.update(1, item: 2, ["p", "q", "k"])
        _ = reference.take()
        reference.update(1, item: 1, ["b499", "y", "k"])
        reference.update(1, item: 2, ["p", "q2", "k"])
        reference.update(1, item: 3, ["n499", nil, "k"])
        #expect(got == reference.take())
        #expect(got.count == 3)

        // Once bound, updates go out one by one again, as deltas against the released rows.
        s.update(1, item: 1, ["c", "y", "k"])
        s.update(1, item: 1, ["d", "y", "k"])
        reference.update(1, item: 1, ["c", "y", "k"])
        reference.update(1, item: 1, ["d", "y", "k"])
        #expect(s.take(Self.recovery) == reference.take())
    }

    @Test func anUnboundSessionsLogStaysFlatHoweverManyUpdates() {
        var s = Self.session([(Self.merge(1), items: 10, fields: 2)])
        _ = Self.dropAfterEverythingSent(&s)
        let before = s.machine.log.heldBytes
        for i in 0..<20_000 { s.update(1, item: i % 10 + 1, ["\(i)", "some value \(i)"]) }
        #expect(s.machine.log.heldBytes == before)
        #expect(!s.machine.isClosed)
        // Each item's first update is held, the other 19,990 replace one.
        #expect(s.machine.takeFoldedCount() == 19_990)
        #expect(s.machine.takeFoldedCount() == 0)
    }

    @Test func unfilteredBufferedDistinctRawAndSnapshotUpdatesAreNotFolded() {
        var s = Self.session([
            (Self.merge(1, maxFrequency: .unfiltered), items: 1, fields: 1),
            (SubscribeParameters(subscriptionId: 2, mode: .distinct, group: "g", schema: "s"), items: 1, fields: 1),
            (SubscribeParameters(subscriptionId: 3, mode: .raw, group: "g", schema: "s"), items: 1, fields: 1),
            (Self.merge(4, buffer: .size(5)), items: 1, fields: 1),
            (Self.merge(5, buffer: .unlimited), items: 1, fields: 1),
            (Self.merge(6), items: 1, fields: 1),
        ])
        let sent = Self.dropAfterEverythingSent(&s)
        for sub in 1...5 {
            for i in 1...3 { s.update(sub, ["v\(i)"]) }
        }
        for i in 1...3 { s.update(6, ["s\(i)"], snapshot: true) }
        let updates = Self.recover(&s, from: sent).filter { $0.hasPrefix("U,") }
        for sub in 1...5 {
            #expect(updates.filter { $0.hasPrefix("U,\(sub),1,") } == ["U,\(sub),1,v1", "U,\(sub),1,v2", "U,\(sub),1,v3"])
        }
        #expect(updates.filter { $0.hasPrefix("U,6,") } == ["U,6,1,s1", "U,6,1,s2", "U,6,1,s3"])
    }

    @Test func anItemsOtherEventsComeAfterItsHeldRow() {
        var s = Self.session([(Self.merge(1), items: 2, fields: 1)])
        s.update(1, item: 1, ["a"])
        let sent = Self.dropAfterEverythingSent(&s)
        s.update(1, item: 1, ["b"])
        s.update(1, item: 2, ["z1"])
        s.record(s.machine.tableEvent(1, .endOfSnapshot(item: 1), now: s.now))
        s.update(1, item: 1, ["c"])
        s.update(1, item: 1, ["d"])
        s.record(s.machine.tableEvent(1, .clearSnapshot(item: 1), now: s.now))
        s.update(1, item: 1, ["e"])
        s.record(s.machine.tableEvent(1, .overflow(item: 1, lost: 2), now: s.now))
        s.update(1, item: 2, ["z2"])
        #expect(
            Self.recover(&s, from: sent) == [
                "U,1,1,b", "EOS,1,1", "U,1,1,d", "CS,1,1", "U,1,1,e", "OV,1,1,2", "U,1,2,z2",
            ])
    }

    @Test func aDeletedSubscriptionsHeldRowsAreDropped() {
        var s = Self.session([(Self.merge(1), items: 1, fields: 1), (Self.merge(2), items: 1, fields: 1)])
        let sent = Self.dropAfterEverythingSent(&s)
        s.update(1, ["gone"])
        s.update(2, ["kept"])
        s.control(.delete(subscriptionId: 1), id: "d1", origin: .http(ConnectionID(30), index: 0))
        s.record(s.machine.unsubscribed(1, now: s.now))
        let lines = Self.recover(&s, from: sent)
        #expect(lines.contains("UNSUB,1"))
        #expect(!lines.contains { $0.hasPrefix("U,1,") })
        #expect(lines.contains("U,2,1,kept"))
    }

    @Test func pollsGetEachItemsLatestRow() {
        let create = ConnectionID(9)
        var s = SessionScript(
            create: CreateSessionRequest(stream: StreamParameters(polling: true, pollingMillis: 0, idleMillis: 0)),
            transport: .http, connection: create)
        s.subscribe(1, items: 2, fields: 1, ack: false)
        let poll = ConnectionID(10)
        s.bind(StreamParameters(polling: true, pollingMillis: 0, idleMillis: 0), on: poll)
        #expect(s.take(poll).contains("CONF,1,unlimited,filtered"))
        for i in 1...50 {
            s.update(1, item: 1, ["a\(i)"])
            s.update(1, item: 2, ["b\(i)"])
        }
        let poll2 = ConnectionID(11)
        s.bind(StreamParameters(polling: true, pollingMillis: 0, idleMillis: 0), on: poll2)
        #expect(s.take(poll2).filter { $0.hasPrefix("U,") } == ["U,1,1,a50", "U,1,2,b50"])
    }
}
