import Testing

@testable import LightstreamerServer

@Suite struct ItemsModesTests {
    @Test func mergeSnapshotIsCurrentRowThenLiveRows() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let first = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a"], ["x", "y"], snapshot: .yes), sink: first)
        // No data yet: the first live row is flagged as the snapshot.
        adapter.push("a", ["x": "1", "y": "2"])
        adapter.push("a", ["x": "3"])
        #expect(first.take() == [update(1, ["1", "2"], snapshot: true), update(1, ["3", "2"])])

        // A late subscriber gets the merged current row as its snapshot.
        let late = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a"], ["y", "x"], snapshot: .yes), sink: late)
        #expect(late.take() == [update(1, ["2", "3"], snapshot: true)])
        #expect(late.startedCount == 1)
        #expect(!late.eventBeforeStart)

        // Without snapshot: nothing until the next update.
        let noSnap = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a"], ["x"]), sink: noSnap)
        #expect(noSnap.take().isEmpty)
        adapter.push("a", ["y": nil])
        #expect(noSnap.take() == [update(1, ["3"])])
        #expect(late.take() == [update(1, [nil, "3"])])
    }

    @Test func mergeSnapshotFromAdapterWaitsForIt() async throws {
        let adapter = ScriptedDataAdapter(snapshotItems: ["a"], snapshotOnSubscribe: ["a": [["x": "10"]]])
        let engine = makeEngine(adapter)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a"], ["x"], snapshot: .yes), sink: sink)
        #expect(sink.take() == [update(1, ["10"], snapshot: true)])
        adapter.push("a", ["x": "11"])
        #expect(sink.take() == [update(1, ["11"])])
    }

    @Test func distinctSnapshotHasRequestedLengthThenEOS() async throws {
        let adapter = ScriptedDataAdapter()
        let metadata = ConfiguredMetadataAdapter(rules: .init(distinctSnapshotLength: 3))
        let engine = makeEngine(adapter, metadata: metadata)
        let keeper = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["chat"], ["m"]), sink: keeper)
        for i in 1...5 { adapter.push("chat", ["m": "m\(i)"]) }
        #expect(keeper.takeRows() == [["m1"], ["m2"], ["m3"], ["m4"], ["m5"]])

        let two = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["chat"], ["m"], snapshot: .length(2)), sink: two)
        #expect(two.take() == [update(1, ["m4"], snapshot: true), update(1, ["m5"], snapshot: true), .endOfSnapshot(item: 1)])

        let all = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["chat"], ["m"], snapshot: .yes), sink: all)
        #expect(
            all.take() == [
                update(1, ["m3"], snapshot: true), update(1, ["m4"], snapshot: true),
                update(1, ["m5"], snapshot: true), .endOfSnapshot(item: 1),
            ])

        // DISTINCT events are not merged: missing fields are null.
        let wide = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["chat"], ["m", "n"]), sink: wide)
        adapter.push("chat", ["n": "x"])
        #expect(wide.takeRows() == [[nil, "x"]])
    }

    @Test func commandSnapshotIsTheTableAndLiveKeepsSemantics() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let live = RecordingSink()
        let fields = ["key", "command", "qty"]
        let handle = try await engine.subscribe(spec(.command, ["p"], fields), sink: live)
        #expect(handle.keyPosition == 1 && handle.commandPosition == 2)
        adapter.push("p", ["key": "a", "command": "ADD", "qty": "1"])
        adapter.push("p", ["key": "b", "command": "ADD", "qty": "2"])
        adapter.push("p", ["key": "a", "command": "UPDATE", "qty": "3"])
        adapter.push("p", ["key": "a", "command": "ADD", "qty": "4"]) // known key: an UPDATE
        adapter.push("p", ["key": "c", "command": "UPDATE", "qty": "5"]) // unknown key: an ADD
        adapter.push("p", ["key": "b", "command": "DELETE"])
        adapter.push("p", ["key": "zz", "command": "DELETE"]) // unknown key: ignored
        #expect(
            live.takeRows() == [
                ["a", "ADD", "1"], ["b", "ADD", "2"], ["a", "UPDATE", "3"], ["a", "UPDATE", "4"],
                ["c", "ADD", "5"], ["b", "DELETE", nil],
            ])

        let late = RecordingSink()
        _ = try await engine.subscribe(spec(.command, ["p"], ["qty", "key", "command"], snapshot: .yes), sink: late)
        #expect(
            late.take() == [
                update(1, ["4", "a", "ADD"], snapshot: true), update(1, ["5", "c", "ADD"], snapshot: true),
                .endOfSnapshot(item: 1),
            ])
    }

    @Test func commandSchemaNeedsKeyAndCommand() async throws {
        let engine = makeEngine(ScriptedDataAdapter())
        await #expect(throws: ItemEngineError(code: 15, message: "COMMAND schema has no key field")) {
            try await engine.subscribe(spec(.command, ["p"], ["command", "qty"]), sink: RecordingSink())
        }
        do {
            _ = try await engine.subscribe(spec(.command, ["p"], ["key", "qty"]), sink: RecordingSink())
            Issue.record("expected code 16")
        } catch {
            #expect(error.code == 16)
        }
    }

    @Test func rawHasNoSnapshotNoMergingAndNoLimit() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let sink = RecordingSink()
        let h = try await engine.subscribe(spec(.raw, ["r"], ["a", "b"], snapshot: .yes, frequency: .limited(1)), sink: sink)
        adapter.push("r", ["a": "1", "b": "1"])
        adapter.push("r", ["a": "2"])
        adapter.push("r", ["b": "3"])
        #expect(sink.take() == [update(1, ["1", "1"]), update(1, ["2", nil]), update(1, [nil, "3"])])
        #expect(engine.grantedFrequency(of: h) == .unlimited)
    }

    @Test func clearSnapshotPerMode() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let merge = RecordingSink()
        let distinct = RecordingSink()
        let command = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["i"], ["a"]), sink: merge)
        _ = try await engine.subscribe(spec(.distinct, ["i"], ["a"]), sink: distinct)
        _ = try await engine.subscribe(spec(.command, ["i"], ["key", "command", "a"]), sink: command)
        adapter.push("i", ["key": "k", "command": "ADD", "a": "1"])
        _ = (merge.take(), distinct.take(), command.take())
        adapter.clear("i")
        #expect(merge.take() == [update(1, [nil])])
        #expect(distinct.take() == [.clearSnapshot(item: 1)])
        #expect(command.take() == [.clearSnapshot(item: 1)])
        // The COMMAND table is empty for a new subscriber.
        let late = RecordingSink()
        _ = try await engine.subscribe(spec(.command, ["i"], ["key", "command", "a"], snapshot: .yes), sink: late)
        #expect(late.take() == [.endOfSnapshot(item: 1)])
    }

    @Test func multipleItemsArePositionedFromOne() async throws {
        let adapter = ScriptedDataAdapter()
        let engine = makeEngine(adapter)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["a", "b", "a"], ["x"]), sink: sink)
        adapter.push("b", ["x": "1"])
        adapter.push("a", ["x": "2"])
        let events = sink.take()
        #expect(events.count == 3)
        #expect(events.first == update(2, ["1"]))
        #expect(Set(events.dropFirst().map { "\($0)" }) == Set([update(1, ["2"]), update(3, ["2"])].map { "\($0)" }))
        #expect(adapter.subscribes.sorted() == ["a", "b"])
    }
}
