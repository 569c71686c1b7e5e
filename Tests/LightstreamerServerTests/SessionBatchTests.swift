import TLCP
import Testing

@testable import LightstreamerServer

/// `tableEvents`: engine events handed over in batches behave as one by one, in fewer writes.
@Suite struct SessionBatchTests {
    /// Two sessions alike, one to handle events one by one and one in batches: subscription 1
    /// (MERGE, 2 items × 2 fields) and 2 (DISTINCT, 1 × 1), then what `more` adds.
    static func twoScripts(_ more: (inout SessionScript) -> Void = { _ in }) -> (one: SessionScript, batch: SessionScript) {
        func make() -> SessionScript {
            var script = SessionScript()
            _ = script.take()
            script.subscribe(1, items: 2, fields: 2, ack: false)
            script.subscribe(2, mode: .distinct, items: 1, fields: 1, ack: false)
            more(&script)
            _ = script.take()
            return script
        }
        return (make(), make())
    }

    @Test func aBatchIsOneWriteWithTheSameLines() {
        var (one, batch) = Self.twoScripts()
        let events: [(subscriptionId: Int, event: TableEvent)] = [
            (1, .update(item: 1, values: ["a", "b"], isSnapshot: true)),
            (2, .update(item: 1, values: ["x"], isSnapshot: false)),
            (1, .update(item: 2, values: ["c", nil], isSnapshot: true)),
            (1, .update(item: 1, values: ["a", "B"], isSnapshot: false)),
            (2, .overflow(item: 1, lost: 3)),
            (9, .update(item: 1, values: ["unknown"], isSnapshot: false)),
            (1, .clearSnapshot(item: 2)),
        ]
        for (id, e) in events { one.record(one.machine.tableEvent(id, e, now: one.now)) }
        let actions = batch.machine.tableEvents(events, now: batch.now)
        batch.record(actions)
        let expected = ["U,1,1,a|b", "U,2,1,x", "U,1,2,c|#", "U,1,1,|B", "OV,2,1,3", "CS,1,2"]
        #expect(one.take() == expected)
        #expect(batch.take() == expected)
        let writes = actions.filter { if case .write = $0 { true } else { false } }
        #expect(writes.count == 1)
        if case .write(_, _, let updates)? = writes.first { #expect(updates == 4) }
        #expect(batch.machine.dataNotificationCount == one.machine.dataNotificationCount)
    }

    /// The engine's batches (with shared encodings) look a table up again only when the
    /// subscription changes: interleaved, unknown and still-subscribing subscriptions give
    /// the lines of one-by-one delivery.
    @Test func aSharedBatchWithInterleavedSubscriptionsGivesTheSameLines() {
        var (one, batch) = Self.twoScripts { script in
            script.control(.add(SubscribeParameters(subscriptionId: 3, mode: .merge, group: "g", schema: "s")), ack: false)
        }
        let events: [(subscriptionId: Int, event: TableEvent)] = [
            (1, .update(item: 1, values: ["a", "b"], isSnapshot: true)),
            (1, .update(item: 2, values: ["c", nil], isSnapshot: true)),
            (2, .update(item: 1, values: ["x"], isSnapshot: false)),
            (9, .update(item: 1, values: ["unknown"], isSnapshot: false)),
            (9, .update(item: 1, values: ["unknown"], isSnapshot: false)),
            (3, .update(item: 1, values: ["early"], isSnapshot: false)),
            (1, .update(item: 1, values: ["a", "B"], isSnapshot: false)),
            (2, .overflow(item: 1, lost: 3)),
            (2, .update(item: 1, values: ["y"], isSnapshot: false)),
            (1, .clearSnapshot(item: 2)),
        ]
        for (id, e) in events { one.record(one.machine.tableEvent(id, e, now: one.now)) }
        let shared: [(subscriptionId: Int, event: EngineEvent)] = events.map {
            ($0.subscriptionId, .event($0.event, nil))
        }
        batch.record(batch.machine.tableEvents(shared, now: batch.now))
        let expected = ["U,1,1,a|b", "U,1,2,c|#", "U,2,1,x", "U,1,1,|B", "OV,2,1,3", "U,2,1,y", "CS,1,2"]
        #expect(one.take() == expected)
        #expect(batch.take() == expected)
        // Subscription 3's event waited for its SUBOK, in both.
        one.record(one.machine.subscribeSucceeded(3, grant: SubscriptionGrant(itemCount: 1, fieldCount: 1), now: one.now))
        batch.record(batch.machine.subscribeSucceeded(3, grant: SubscriptionGrant(itemCount: 1, fieldCount: 1), now: batch.now))
        #expect(one.take() == batch.take())
    }

    /// An update the engine shares between sessions (`EngineEvent.shared`) that reaches a
    /// subscription still waiting for its `SUBOK` waits with it, and follows it.
    @Test func aSharedUpdateBeforeTheSUBOKFollowsIt() {
        var (s, _) = Self.twoScripts { script in
            script.control(.add(SubscribeParameters(subscriptionId: 3, mode: .merge, group: "g", schema: "s")), ack: false)
        }
        let encoding = SharedUpdateEncoding(previous: nil, values: ["early"])
        s.record(s.machine.tableEvents([(3, .shared(item: 1, isSnapshot: false, encoding: encoding))], now: s.now))
        #expect(s.take() == [])
        s.record(s.machine.subscribeSucceeded(3, grant: SubscriptionGrant(itemCount: 1, fieldCount: 1), now: s.now))
        #expect(s.take() == ["SUBOK,3,1,1", "CONF,3,unlimited,filtered", "U,3,1,early"])
    }

    /// The same without a stream: the update waits for the `SUBOK` rather than being held as
    /// the item's row, and the next stream gets both, in that order.
    @Test func aSharedUpdateBeforeTheSUBOKFollowsItWithoutAStream() {
        var (s, _) = Self.twoScripts { script in
            script.control(.add(SubscribeParameters(subscriptionId: 3, mode: .merge, group: "g", schema: "s")), ack: false)
        }
        s.record(s.machine.connectionClosed(SessionScript.stream, now: s.now))
        let encoding = SharedUpdateEncoding(previous: nil, values: ["early"])
        s.record(s.machine.tableEvents([(3, .shared(item: 1, isSnapshot: false, encoding: encoding))], now: s.now))
        s.record(s.machine.subscribeSucceeded(3, grant: SubscriptionGrant(itemCount: 1, fieldCount: 1), now: s.now))
        let next = ConnectionID(77)
        s.bind(StreamParameters(sendSync: false), on: next, transport: .webSocket)
        #expect(s.take(next).filter { $0.hasPrefix("SUBOK,3,") || $0.hasPrefix("U,3,") } == ["SUBOK,3,1,1", "U,3,1,early"])
    }

    /// A session that closes in the middle of a batch (unbound, with too much waiting for a
    /// stream) ignores the batch's remaining events, for every subscription. DISTINCT, whose
    /// updates an unbound session keeps one by one (MERGE ones fold, SessionUnboundFoldingTests).
    @Test func aSessionClosedMidBatchIgnoresTheRest() {
        var settings = SessionScript.settings
        settings.maxPendingNotifications = 3
        var s = SessionScript(settings: settings)
        s.subscribe(1, mode: .distinct, items: 1, fields: 1, ack: false)
        s.subscribe(2, mode: .distinct, items: 1, fields: 1, ack: false)
        s.record(s.machine.connectionClosed(SessionScript.stream, now: s.now))
        _ = s.take()
        #expect(!s.machine.isClosed)
        let before = s.machine.dataNotificationCount
        let shared: [(subscriptionId: Int, event: EngineEvent)] = (0..<8).map {
            ($0 % 2 + 1, .event(.update(item: 1, values: ["\($0)"], isSnapshot: false), nil))
        }
        s.record(s.machine.tableEvents(shared, now: s.now))
        #expect(s.machine.isClosed)
        // The fourth waiting notification closed it; the other four events were ignored.
        #expect(s.machine.dataNotificationCount == before + 4)
        s.record(s.machine.tableEvents(shared, now: s.now))
        #expect(s.machine.dataNotificationCount == before + 4)
    }

    @Test func eventsOfASubscriptionStillSubscribingWait() {
        var s = SessionScript()
        _ = s.take()
        s.control(.add(SubscribeParameters(subscriptionId: 1, mode: .merge, group: "g", schema: "s")), ack: false)
        s.record(s.machine.tableEvents([(1, .update(item: 1, values: ["v", "w"], isSnapshot: true))], now: s.now))
        #expect(s.take().isEmpty)
        s.record(s.machine.subscribeSucceeded(1, grant: SubscriptionGrant(itemCount: 1, fieldCount: 2), now: s.now))
        #expect(s.take() == ["SUBOK,1,1,2", "CONF,1,unlimited,filtered", "U,1,1,v|w"])
    }
}

/// The log is pruned once per batch: whatever the batch's size, what it keeps afterwards is
/// what pruning after every line would have kept.
@Suite struct SessionBatchPruneTests {
    @Test func aBatchLeavesTheLogWithinItsCountLimit() {
        var settings = SessionScript.settings
        settings.recoveryMaxNotifications = 5
        var s = SessionScript.subscribed(items: 1, fields: 1, settings: settings)
        let events: [(subscriptionId: Int, event: TableEvent)] = (1...40).map {
            (1, .update(item: 1, values: ["\($0)"], isSnapshot: false))
        }
        s.record(s.machine.tableEvents(events, now: s.now))
        #expect(s.take().count == 40)
        #expect(s.machine.log.count == 5)
        #expect(s.machine.log.firstProgressive == s.machine.log.lastProgressive - 4)
        // Handled one by one, the same.
        var t = SessionScript.subscribed(items: 1, fields: 1, settings: settings)
        for (id, e) in events { t.record(t.machine.tableEvent(id, e, now: t.now)) }
        #expect(t.machine.log.count == 5)
        #expect(t.machine.log.firstProgressive == s.machine.log.firstProgressive)
        // The engine's batches, which carry shared encodings, the same.
        var u = SessionScript.subscribed(items: 1, fields: 1, settings: settings)
        let shared: [(subscriptionId: Int, event: EngineEvent)] = events.map {
            ($0.subscriptionId, .event($0.event, nil))
        }
        u.record(u.machine.tableEvents(shared, now: u.now))
        #expect(u.take().count == 40)
        #expect(u.machine.log.count == 5)
        #expect(u.machine.log.firstProgressive == s.machine.log.firstProgressive)
    }
}
