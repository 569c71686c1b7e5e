import Testing

@testable import LightstreamerServer

@Suite struct AdaptersTests {
    typealias Behavior = SimulatedDataAdapter.Behavior

    static func engine(
        _ items: [String: Behavior], clock: ManualEngineClock,
        rules: ConfiguredMetadataAdapter.Rules = .init()
    ) -> ItemEngine {
        let adapter = SimulatedDataAdapter(items: items, clock: clock, seed: 5)
        let set = AdapterSet(name: "SET", metadata: ConfiguredMetadataAdapter(rules: rules), dataAdapters: ["DEFAULT": adapter])
        return ItemEngine(adapterSets: [set], clock: clock)
    }

    @Test func staticItemIsASnapshotAndNothingMore() async throws {
        let clock = ManualEngineClock()
        let engine = Self.engine(["s": .staticValues(["a": "1", "b": nil])], clock: clock)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["s"], ["a", "b"], snapshot: .yes), sink: sink)
        #expect(sink.take() == [update(1, ["1", nil], snapshot: true)])
        clock.advance(by: .seconds(10))
        #expect(sink.take().isEmpty)
        let distinct = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["s"], ["a"], snapshot: .yes), sink: distinct)
        #expect(distinct.take() == [update(1, ["1"], snapshot: true), .endOfSnapshot(item: 1)])
    }

    @Test func counterTicksAtItsRateAndConstantsNeverChange() async throws {
        let clock = ManualEngineClock()
        let engine = Self.engine(
            [
                "c": .counter(
                    .init(
                        updatesPerSecond: 10, counterFields: ["n", "m"],
                        constantFields: ["k": "fixed"], start: 5, step: 2))
            ], clock: clock)
        let sink = RecordingSink()
        let h = try await engine.subscribe(spec(.merge, ["c"], ["n", "m", "k"], snapshot: .yes), sink: sink)
        #expect(sink.take() == [update(1, ["5", "5", "fixed"], snapshot: true)])
        clock.advance(by: .seconds(1))
        let rows = sink.takeRows()
        #expect(rows.count == 10)
        #expect(rows.last == ["25", "25", "fixed"])
        #expect(rows.allSatisfy { $0[2] == "fixed" })

        // Stops when unsubscribed, keeps its value for the next subscription.
        await engine.unsubscribe(h)
        #expect(clock.pendingTimerCount == 0)
        let again = RecordingSink()
        _ = try await engine.subscribe(spec(.merge, ["c"], ["n"], snapshot: .yes), sink: again)
        #expect(again.takeRows() == [["25"]])
    }

    @Test func randomWalkStaysInBoundsWithItsDecimals() async throws {
        let clock = ManualEngineClock()
        let walk = SimulatedDataAdapter.WalkField(start: 10, step: 3, min: 5, max: 15, decimals: 3)
        let engine = Self.engine(["w": .randomWalk(.init(updatesPerSecond: 50, fields: ["p": walk]))], clock: clock)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.distinct, ["w"], ["p"]), sink: sink)
        clock.advance(by: .seconds(4))
        let values = sink.takeRows().compactMap { $0[0] ?? nil }
        #expect(values.count == 200)
        #expect(
            values.allSatisfy { v in
                guard let d = Double(v), let dot = v.firstIndex(of: ".") else { return false }
                return d >= 5 && d <= 15 && v[v.index(after: dot)...].count == 3
            })
        #expect(Set(values).count > 20) // it does move
    }

    @Test func commandTableSnapshotAndChanges() async throws {
        let clock = ManualEngineClock()
        let table = SimulatedDataAdapter.CommandTable(
            rows: [["key": "a", "qty": "10"], ["key": "b", "qty": "20"]],
            updatesPerSecond: 5, updateFields: ["qty"], churn: true)
        let engine = Self.engine(["t": .commandTable(table)], clock: clock)
        let sink = RecordingSink()
        _ = try await engine.subscribe(spec(.command, ["t"], ["key", "command", "qty"], snapshot: .yes), sink: sink)
        #expect(
            sink.take() == [
                update(1, ["a", "ADD", "10"], snapshot: true), update(1, ["b", "ADD", "20"], snapshot: true),
                .endOfSnapshot(item: 1),
            ])
        clock.advance(by: .seconds(20))
        let rows = sink.takeRows()
        #expect(rows.count > 50)
        // Replaying the commands keeps a consistent table: no UPDATE/DELETE of an absent key, no
        // ADD of a present one.
        var present: Set<String> = ["a", "b"]
        for row in rows {
            guard let key = row[0] ?? nil, let command = row[1] ?? nil else {
                Issue.record("row without key/command")
                continue
            }
            switch command {
            case "ADD": #expect(present.insert(key).inserted)
            case "UPDATE": #expect(present.contains(key))
            case "DELETE": #expect(present.remove(key) != nil)
            default: Issue.record("bad command \(command)")
            }
        }
        #expect(rows.contains { $0[1] == "DELETE" })
        #expect(rows.contains { $0[1] == "UPDATE" })
    }

    @Test func undeclaredItemIsRefused() async throws {
        let engine = Self.engine([:], clock: ManualEngineClock())
        do {
            _ = try await engine.subscribe(spec(.merge, ["nope"], ["a"]), sink: RecordingSink())
            Issue.record("expected a refusal")
        } catch {
            #expect(error.code == 21)
        }
    }

    @Test func configuredMetadataRules() async throws {
        let rules = ConfiguredMetadataAdapter.Rules(
            users: ["alice": "pw"], refusalCode: -3, allowedModes: [.merge, .distinct], maxFrequency: 10,
            items: [
                .init(pattern: ItemPattern("raw*"), allowedModes: [.raw]),
                .init(pattern: ItemPattern("slow*"), maxFrequency: 1, bufferSize: 3, distinctSnapshotLength: 5),
            ],
            messages: .echo)
        let md = ConfiguredMetadataAdapter(rules: rules)
        try await md.notifyUser(user: "alice", password: "pw", headers: [:], clientIP: nil)
        await #expect(throws: MetadataError.access(code: -3, message: "Invalid user or password")) {
            try await md.notifyUser(user: "alice", password: "no", headers: [:], clientIP: nil)
        }
        await #expect(throws: MetadataError.self) {
            try await md.notifyUser(user: nil, password: nil, headers: [:], clientIP: nil)
        }
        #expect(await md.isModeAllowed(user: nil, item: "x", mode: .merge))
        #expect(await !md.isModeAllowed(user: nil, item: "x", mode: .raw))
        #expect(await md.isModeAllowed(user: nil, item: "raw1", mode: .raw))
        #expect(await !md.isModeAllowed(user: nil, item: "raw1", mode: .merge))
        #expect(await md.allowedMaxFrequency(user: nil, item: "x") == 10)
        #expect(await md.allowedMaxFrequency(user: nil, item: "slow2") == 1)
        #expect(await md.allowedBufferSize(user: nil, item: "slow2") == 3)
        #expect(await md.distinctSnapshotLength(item: "slow2") == 5)
        #expect(await md.distinctSnapshotLength(item: "x") == 100)
        #expect(try await md.items(user: nil, sessionId: "s", group: "a  b", dataAdapter: "DEFAULT") == ["a", "b"])
        #expect(try await md.notifyUserMessage(user: nil, sessionId: "s", message: "hi") == "hi")

        let refusing = ConfiguredMetadataAdapter(rules: .init(messages: .refuse))
        await #expect(throws: MetadataError.self) { try await refusing.notifyUserMessage(user: nil, sessionId: "s", message: "x") }
        let hooked = ConfiguredMetadataAdapter(rules: .init()) { user, _, message in "\(user ?? "-"):\(message)" }
        #expect(try await hooked.notifyUserMessage(user: "u", sessionId: "s", message: "m") == "u:m")
    }

    @Test func itemPatterns() {
        #expect(ItemPattern("item*").matches("item"))
        #expect(ItemPattern("item*").matches("item12"))
        #expect(!ItemPattern("item*").matches("items".uppercased()))
        #expect(ItemPattern("*").matches(""))
        #expect(ItemPattern("a*b*c").matches("aXXbYYc"))
        #expect(ItemPattern("a*b*c").matches("abc"))
        #expect(!ItemPattern("a*b*c").matches("acb"))
        #expect(!ItemPattern("a*a").matches("a"))
        #expect(ItemPattern("exact").matches("exact"))
        #expect(!ItemPattern("exact").matches("exact1"))
    }

    @Test func numberFormatting() {
        #expect(fixedDecimal(12.5, decimals: 2) == "12.50")
        #expect(fixedDecimal(-0.004, decimals: 2) == "0.00")
        #expect(fixedDecimal(-3.14159, decimals: 3) == "-3.142")
        #expect(fixedDecimal(7, decimals: 0) == "7")
        #expect(fixedDecimal(.nan, decimals: 2) == "0")
        #expect(clockText(secondsSinceEpoch: 3_723) == "01:02:03")
        #expect(clockText(secondsSinceEpoch: 86_399) == "23:59:59")
    }
}
