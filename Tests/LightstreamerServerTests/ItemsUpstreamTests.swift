import Testing

@testable import LightstreamerServer

@Suite struct ItemsUpstreamTests {
    @Test func oneUpstreamSubscriptionForManySubscribers() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        var handles: [TableHandle] = []
        var sinks: [RecordingSink] = []
        for i in 0..<20 {
            let sink = RecordingSink()
            let mode: SubscriptionMode = i % 2 == 0 ? .merge : .distinct
            handles.append(try await engine.subscribe(spec(mode, ["shared"], ["v"]), sink: sink))
            sinks.append(sink)
        }
        #expect(adapter.subscribes == ["shared"])
        #expect(engine.upstreamItemCount == 1)
        adapter.push("shared", ["v": "x"])
        for sink in sinks { #expect(sink.takeRows() == [["x"]]) }

        for h in handles.dropLast() { await engine.unsubscribe(h) }
        #expect(adapter.unsubscribes.isEmpty)
        await engine.unsubscribe(handles[handles.count - 1])
        #expect(adapter.unsubscribes == ["shared"])
        #expect(adapter.active.isEmpty)
        #expect(engine.upstreamItemCount == 0)
        #expect(engine.tableCount == 0)
    }

    @Test func unsubscribeStopsEventsAndResubscribeStartsAgain() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        let sink = RecordingSink()
        let h = try await engine.subscribe(spec(.distinct, ["a"], ["v"], frequency: .limited(1)), sink: sink)
        adapter.push("a", ["v": "1"])
        adapter.push("a", ["v": "2"]) // waiting behind the limit
        #expect(sink.takeRows() == [["1"]])
        await engine.unsubscribe(h)
        adapter.push("a", ["v": "3"])
        clock.advance(by: .seconds(5))
        #expect(sink.take().isEmpty)
        #expect(clock.pendingTimerCount == 0)
        #expect(adapter.unsubscribes == ["a"])

        let again = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a"], ["v"], snapshot: .yes), sink: again)
        #expect(adapter.subscribes == ["a", "a"])
        // The item's state started over.
        adapter.push("a", ["v": "4"])
        #expect(again.take() == [update(1, ["4"], snapshot: true)])
        await engine.unsubscribe(h) // a second unsubscribe does nothing
    }

    @Test func refusedItemFailsTheWholeTableAndReleasesTheOthers() async throws {
        let adapter = ScriptedDataAdapter(refused: ["bad"])
        let engine = makeEngine(adapter)
        do {
            _ = try await engine.subscribe(spec(.merge, ["good", "bad"], ["v"]), sink: RecordingSink())
            Issue.record("expected a refusal")
        } catch {
            #expect(error.code == 21)
        }
        // Let the released item's upstream unsubscribe run.
        for _ in 0..<100 where adapter.unsubscribes != ["good"] { await Task.yield() }
        #expect(adapter.unsubscribes == ["good"])
        #expect(engine.upstreamItemCount == 0)
    }

    @Test func validationCodes() async throws {
        let metadata = ConfiguredMetadataAdapter(rules: .init(allowedModes: [.merge, .distinct]))
        let engine = makeEngine(ScriptedDataAdapter(), metadata: metadata)
        func code(_ s: TableSpec) async -> Int? {
            do {
                _ = try await engine.subscribe(s, sink: RecordingSink())
                return nil
            } catch {
                return error.code
            }
        }
        #expect(await code(spec(.merge, ["a"], ["x"], dataAdapter: "NOPE")) == 17)
        #expect(await code(spec(.raw, ["a"], ["x"])) == 24)
        #expect(await code(spec(.merge, ["a"], ["x"], selector: "y=1")) == 25)
        #expect(await code(spec(.merge, ["a"], ["x"], selector: "x~1")) == 25)
        #expect(await code(spec(.merge, ["a"], ["x"], selector: "x=1")) == nil)
        var otherSet = spec(.merge, ["a"], ["x"])
        otherSet.adapterSet = "MISSING"
        #expect(await code(otherSet) == 17)
        #expect(engine.adapterSet(named: "SET") != nil)
        #expect(engine.adapterSet(named: "MISSING") == nil)
    }

    @Test func selectorFiltersMergeAndDistinct() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["n"], ["who", "text"], selector: "who=bob & text!=#"), sink: sink)
        adapter.push("n", ["who": "alice", "text": "hi"])
        adapter.push("n", ["who": "bob", "text": "yo"])
        adapter.push("n", ["who": "bob"])
        #expect(sink.takeRows() == [["bob", "yo"]])
    }

    @Test func selectorMakesCommandKeysEnterAndLeave() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.command, ["p"], ["key", "command", "side"], selector: "side=buy"), sink: sink)
        adapter.push("p", ["key": "a", "command": "ADD", "side": "sell"])
        adapter.push("p", ["key": "a", "command": "UPDATE", "side": "buy"])
        adapter.push("p", ["key": "a", "command": "UPDATE", "side": "buy"])
        adapter.push("p", ["key": "a", "command": "UPDATE", "side": "sell"])
        adapter.push("p", ["key": "a", "command": "DELETE"])
        #expect(sink.takeRows() == [["a", "ADD", "buy"], ["a", "UPDATE", "buy"], ["a", "DELETE", nil]])
    }

    @Test func eventsArriveInOrderUnderConcurrentProducers() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.raw, ["a", "b"], ["n"]), sink: sink)
        await withTaskGroup(of: Void.self) { group in
            for item in ["a", "b"] {
                group.addTask {
                    for i in 0..<2000 { adapter.push(item, ["n": "\(i)"]) }
                }
            }
        }
        let events = sink.take()
        #expect(events.count == 4000)
        for position in [1, 2] {
            let seq = events.compactMap { e -> Int? in
                guard case .update(position, let v, _) = e, let text = v.first ?? nil else { return nil }
                return Int(text)
            }
            #expect(seq == Array(0..<2000))
        }
        #expect(!sink.eventBeforeStart)
    }

    @Test func shutdownEndsEverything() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a", "b"], ["v"]), sink: sink)
        await engine.shutdown()
        #expect(Set(adapter.unsubscribes) == ["a", "b"])
        adapter.push("a", ["v": "1"])
        #expect(sink.take().isEmpty)
        await #expect(throws: ItemEngineError.self) {
            try await engine.subscribe(spec(.merge, ["a"], ["v"]), sink: RecordingSink())
        }
    }
}
