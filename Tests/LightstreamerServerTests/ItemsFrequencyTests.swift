import Testing

@testable import LightstreamerServer

@Suite struct ItemsFrequencyTests {
    @Test func mergeConflatesToLatestUnderFrequencyLimit() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        let sink = RecordingSink()
        let h = try await engine.subscribe(spec(.merge, ["a"], ["x", "y"], frequency: .limited(2)), sink: sink)
        #expect(engine.grantedFrequency(of: h) == .limited(2))
        adapter.push("a", ["x": "1", "y": "a"]) // goes at once
        adapter.push("a", ["x": "2"])
        adapter.push("a", ["y": "b"])
        adapter.push("a", ["x": "3"])
        #expect(sink.takeRows() == [["1", "a"]])
        clock.advance(by: .ms(499))
        #expect(sink.takeRows().isEmpty)
        clock.advance(by: .ms(1))
        #expect(sink.takeRows() == [["3", "b"]]) // latest values, merged
        clock.advance(by: .ms(2000))
        #expect(sink.takeRows().isEmpty)
        adapter.push("a", ["x": "4"]) // interval passed: at once
        #expect(sink.takeRows() == [["4", "b"]])
    }

    @Test func updatesReplacedOrDroppedByFrequencyLimitsAreCounted() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a"], ["x"], frequency: .limited(1)), sink: sink)
        _ = try await engine.subscribe(spec(.distinct, ["d"], ["m"], frequency: .limited(1), buffer: .size(2)), sink: sink)
        _ = try await engine.subscribe(spec(.merge, ["b"], ["x"]), sink: sink)
        // MERGE, buffer 1: the first goes, the second waits, the next three replace it.
        for i in 1...5 { adapter.push("a", ["x": "\(i)"]) }
        #expect(engine.updatesFiltered == 3)
        // DISTINCT, buffer 2: the first goes, two wait, the next two push the oldest out.
        for i in 1...5 { adapter.push("d", ["m": "\(i)"]) }
        #expect(engine.updatesFiltered == 5)
        // No limit: nothing filtered.
        for i in 1...5 { adapter.push("b", ["x": "\(i)"]) }
        #expect(engine.updatesFiltered == 5)
        #expect(engine.updatesReceived == 15)
    }

    @Test func mergeBufferKeepsUpToBufferSizeRows() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a"], ["x"], frequency: .limited(10), buffer: .size(2)), sink: sink)
        for i in 1...5 { adapter.push("a", ["x": "\(i)"]) }
        #expect(sink.takeRows() == [["1"]])
        clock.advance(by: .ms(300))
        #expect(sink.takeRows() == [["2"], ["5"]]) // buffer of 2: the newest waiting row is replaced
    }

    @Test func distinctFilteredBufferDropsOldestSilently() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["d"], ["m"], frequency: .limited(1), buffer: .size(2)), sink: sink)
        for i in 1...5 { adapter.push("d", ["m": "\(i)"]) }
        clock.advance(by: .seconds(5))
        #expect(sink.take() == [update(1, ["1"]), update(1, ["4"]), update(1, ["5"])])
    }

    @Test func distinctUnlimitedBufferKeepsEveryEventAtTheLimitedRate() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["d"], ["m"], frequency: .limited(4)), sink: sink)
        for i in 1...5 { adapter.push("d", ["m": "\(i)"]) }
        #expect(sink.takeRows().count == 1)
        clock.advance(by: .ms(250))
        #expect(sink.takeRows() == [["2"]])
        clock.advance(by: .ms(750))
        #expect(sink.takeRows() == [["3"], ["4"], ["5"]])
    }

    @Test func unfilteredNeverDropsAndReconfIsRefused() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let sink = RecordingSink()
        let h = try await engine.subscribe(spec(.merge, ["a"], ["x"], frequency: .unfiltered), sink: sink)
        #expect(h.isUnfiltered)
        for i in 1...100 { adapter.push("a", ["x": "\(i)"]) }
        #expect(sink.takeRows() == (1...100).map { [String?.some("\($0)")] })
        await #expect(throws: ItemEngineError.reconfUnfiltered) { try await engine.setMaxFrequency(h, .limited(1)) }
    }

    @Test func unfilteredRefusedWhenItemHasFrequencyLimit() async throws {
        let metadata = ConfiguredMetadataAdapter(rules: .init(items: [.init(pattern: ItemPattern("slow*"), maxFrequency: 1)]))
        let engine = makeEngine(ScriptedDataAdapter(), metadata: metadata)
        do {
            _ = try await engine.subscribe(spec(.merge, ["fast", "slow1"], ["x"], frequency: .unfiltered), sink: RecordingSink())
            Issue.record("expected 26")
        } catch {
            #expect(error.code == 26)
        }
        // A filtered subscription is clamped to the item's limit.
        let h = try await engine.subscribe(spec(.merge, ["slow1"], ["x"], frequency: .limited(5)), sink: RecordingSink())
        #expect(engine.grantedFrequency(of: h) == .limited(1))
        let h2 = try await engine.subscribe(spec(.merge, ["slow1"], ["x"]), sink: RecordingSink())
        #expect(engine.grantedFrequency(of: h2) == .limited(1))
    }

    @Test func commandConflatesUpdatesOfOneKeyButKeepsAddAndDelete() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.command, ["p"], ["key", "command", "v"], frequency: .limited(1)), sink: sink)
        adapter.push("p", ["key": "a", "command": "ADD", "v": "1"]) // at once
        adapter.push("p", ["key": "b", "command": "ADD", "v": "1"]) // waits
        adapter.push("p", ["key": "b", "command": "UPDATE", "v": "2"]) // merges into the waiting ADD
        adapter.push("p", ["key": "a", "command": "UPDATE", "v": "2"])
        adapter.push("p", ["key": "a", "command": "UPDATE", "v": "3"]) // conflates with the waiting UPDATE
        adapter.push("p", ["key": "c", "command": "ADD", "v": "1"])
        adapter.push("p", ["key": "c", "command": "DELETE"]) // ADD and DELETE both kept
        clock.advance(by: .seconds(10))
        #expect(
            sink.takeRows() == [
                ["a", "ADD", "1"], ["b", "ADD", "2"], ["a", "UPDATE", "3"], ["c", "ADD", "1"], ["c", "DELETE", nil],
            ])
    }

    @Test func commandQueueOverflowIsReportedWithOV() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock, cap: 3)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.command, ["p"], ["key", "command"], frequency: .limited(1)), sink: sink)
        for i in 1...6 { adapter.push("p", ["key": "k\(i)", "command": "ADD"]) }
        // k1 went at once; k2…k6 waited in a queue of 3: k2 and k3 were lost.
        clock.advance(by: .seconds(1))
        #expect(sink.take() == [update(1, ["k1", "ADD"]), .overflow(item: 1, lost: 2), update(1, ["k4", "ADD"])])
        clock.advance(by: .seconds(5))
        #expect(sink.takeRows() == [["k5", "ADD"], ["k6", "ADD"]])
    }

    @Test func reconfChangesRateAndLiftingTheLimitFlushes() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        let sink = RecordingSink()
        let h = try await engine.subscribe(spec(.distinct, ["d"], ["m"], frequency: .limited(1)), sink: sink)
        for i in 1...4 { adapter.push("d", ["m": "\(i)"]) }
        #expect(sink.takeRows() == [["1"]])
        try await engine.setMaxFrequency(h, .limited(10))
        #expect(engine.grantedFrequency(of: h) == .limited(10))
        clock.advance(by: .ms(100))
        #expect(sink.takeRows() == [["2"]])
        try await engine.setMaxFrequency(h, .unlimited)
        #expect(sink.takeRows() == [["3"], ["4"]])
        #expect(engine.grantedFrequency(of: h) == .unlimited)
        adapter.push("d", ["m": "5"])
        #expect(sink.takeRows() == [["5"]])
        await #expect(throws: ItemEngineError.self) { try await engine.setMaxFrequency(h, .unfiltered) }
    }

    @Test func snapshotIsNotDelayedByTheLimit() async throws {
        let adapter = ScriptedDataAdapter()
        let clock = ManualEngineClock()
        let engine = makeEngine(adapter, clock: clock)
        _ = try await engine.subscribe(spec(.distinct, ["d"], ["m"]), sink: RecordingSink())
        for i in 1...3 { adapter.push("d", ["m": "\(i)"]) }
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["d"], ["m"], snapshot: .yes, frequency: .limited(1)), sink: sink)
        #expect(sink.take().count == 4) // 3 snapshot events and EOS, all at once
        adapter.push("d", ["m": "4"])
        #expect(sink.take().isEmpty) // the next live one waits a full interval
        clock.advance(by: .seconds(1))
        #expect(sink.takeRows() == [["4"]])
    }
}
