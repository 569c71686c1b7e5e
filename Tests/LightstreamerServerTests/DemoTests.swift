import Testing

@testable import LightstreamerServer

@Suite struct DemoTests {
    static let stockFields = [
        "stock_name", "last_price", "time", "pct_change", "bid_quantity", "bid", "ask",
        "ask_quantity", "min", "max", "ref_price", "open_price",
    ]

    static func demo(
        _ clock: ManualEngineClock, options: DemoAdapters.Options = .init(secondsSinceEpoch: { 45_296 })
    )
        -> (ItemEngine, AdapterSet)
    {
        let set = DemoAdapters.makeDemoAdapterSet(options: options, clock: clock)
        return (ItemEngine(adapterSets: [set], clock: clock), set)
    }

    static func demoSpec(
        _ mode: SubscriptionMode, _ items: [String], _ fields: [String],
        snapshot: SnapshotRequest = .yes
    ) -> TableSpec {
        TableSpec(adapterSet: "DEMO", dataAdapter: "DEFAULT", mode: mode, items: items, fields: fields, snapshot: snapshot)
    }

    @Test func stocksHaveEveryFieldAndMoveRealistically() async throws {
        let clock = ManualEngineClock()
        let (engine, _) = Self.demo(clock)
        let items = (1...30).map { "item\($0)" }
        let sink = RecordingSink()
        _ = try await engine.subscribe(Self.demoSpec(.merge, items, Self.stockFields), sink: sink)
        let snapshot = sink.take()
        #expect(snapshot.count == 30)
        var names = Set<String>()
        for event in snapshot {
            guard case .update(_, let v, true) = event else {
                Issue.record("not a snapshot: \(event)")
                continue
            }
            #expect(v.allSatisfy { $0 != nil })
            names.insert(v[0] ?? "")
            #expect(v[2] == "12:34:56")
        }
        #expect(names.count == 30)

        clock.advance(by: .seconds(10))
        let rows = sink.take().compactMap { e -> (Int, [String?])? in
            if case .update(let i, let v, false) = e { return (i, v) } else { return nil }
        }
        // About 2 updates/s per item: 30 items × 10 s.
        #expect(rows.count > 400 && rows.count < 800)
        for (_, v) in rows {
            let value = { (name: String) in Double(v[Self.stockFields.firstIndex(of: name) ?? 0] ?? "") ?? .nan }
            let last = value("last_price"), ref = value("ref_price")
            #expect(last >= ref * 0.6 && last <= ref * 1.4)
            #expect(value("bid") < last && last < value("ask"))
            #expect(value("min") <= last && last <= value("max"))
            let pct = (last - ref) / ref * 100
            #expect(abs(pct - value("pct_change")) < 0.01)
            #expect(value("bid_quantity") > 0 && value("ask_quantity") > 0)
        }
        #expect(Set(rows.map(\.0)).count == 30)
    }

    @Test func counterCountsAtTheConfiguredRate() async throws {
        let clock = ManualEngineClock()
        let (engine, _) = Self.demo(clock, options: .init(counterUpdatesPerSecond: 20))
        let sink = RecordingSink()
        _ = try await engine.subscribe(Self.demoSpec(.merge, ["counter"], ["count"]), sink: sink)
        #expect(sink.takeRows() == [["0"]])
        clock.advance(by: .seconds(1))
        #expect(sink.takeRows() == (1...20).map { [String?.some(String($0))] })
    }

    @Test func portfolioIsACommandTable() async throws {
        let clock = ManualEngineClock()
        let (engine, _) = Self.demo(clock, options: .init(portfolioChangesPerSecond: 10))
        let sink = RecordingSink()
        let h = try await engine.subscribe(Self.demoSpec(.command, ["portfolio1"], ["key", "command", "qty", "price"]), sink: sink)
        #expect(h.keyPosition == 1 && h.commandPosition == 2)
        let snapshot = sink.take()
        #expect(snapshot.last == .endOfSnapshot(item: 1))
        var held = Set<String>()
        for case .update(_, let v, true) in snapshot {
            #expect(v[1] == "ADD")
            #expect(Int(v[2] ?? "") != nil && Double(v[3] ?? "") != nil)
            held.insert(v[0].flatMap { $0 } ?? "")
        }
        #expect(held == ["item1", "item7", "item12"])
        clock.advance(by: .seconds(30))
        let commands = sink.takeRows()
        #expect(commands.count > 150)
        for row in commands {
            guard let key = row[0] ?? nil, let command = row[1] ?? nil else { continue }
            switch command {
            case "ADD": #expect(held.insert(key).inserted)
            case "UPDATE": #expect(held.contains(key))
            case "DELETE": #expect(held.remove(key) != nil)
            default: Issue.record("bad command")
            }
        }
        #expect(Set(commands.compactMap { $0[1] ?? nil }) == ["ADD", "UPDATE", "DELETE"])
        // COMMAND only for the portfolio, and never for the stocks.
        await #expect(throws: ItemEngineError.self) {
            try await engine.subscribe(Self.demoSpec(.merge, ["portfolio1"], ["qty"]), sink: RecordingSink())
        }
        await #expect(throws: ItemEngineError.self) {
            try await engine.subscribe(Self.demoSpec(.command, ["item1"], ["key", "command"]), sink: RecordingSink())
        }
    }

    @Test func chatMessagesGoToTheChatRoom() async throws {
        let clock = ManualEngineClock()
        let (engine, set) = Self.demo(clock, options: .init(chatHistoryLength: 2, secondsSinceEpoch: { 60 }))
        let metadata = set.metadata
        _ = try await metadata.notifyUserMessage(user: "early", sessionId: "s0", message: "CHAT|before anyone listened")
        try await metadata.notifyNewSession(user: "bob", sessionId: "s1", clientContext: ["clientIP": "10.0.0.1"])
        let sink = RecordingSink()
        _ = try await engine.subscribe(Self.demoSpec(.distinct, ["chat_room"], ["message", "timestamp", "IP", "nick"]), sink: sink)
        #expect(
            sink.take() == [
                update(1, ["before anyone listened", "00:01:00", nil, "early"], snapshot: true),
                .endOfSnapshot(item: 1),
            ])
        let response = try await metadata.notifyUserMessage(user: "bob", sessionId: "s1", message: "CHAT|hello|world")
        #expect(response == nil)
        #expect(sink.takeRows() == [["hello|world", "00:01:00", "10.0.0.1", "bob"]])
        // Other messages are accepted and do not reach the chat.
        _ = try await metadata.notifyUserMessage(user: "bob", sessionId: "s1", message: "PING")
        #expect(sink.take().isEmpty)
        // The snapshot keeps the last `chatHistoryLength` messages.
        let late = RecordingSink()
        _ = try await engine.subscribe(Self.demoSpec(.distinct, ["chat_room"], ["message"], snapshot: .length(5)), sink: late)
        #expect(late.takeRows() == [["before anyone listened"], ["hello|world"]])
    }

    @Test func unknownItemAndRefusedUser() async throws {
        let (engine, set) = Self.demo(ManualEngineClock())
        for item in ["item0", "item31", "item01", "nothing"] {
            await #expect(throws: ItemEngineError.self) {
                try await engine.subscribe(Self.demoSpec(.merge, [item], ["stock_name"]), sink: RecordingSink())
            }
        }
        await #expect(throws: MetadataError.access(code: -2, message: "User refused is not allowed")) {
            try await set.metadata.notifyUser(user: "refused", password: nil, headers: [:], clientIP: nil)
        }
        try await set.metadata.notifyUser(user: "anyone", password: nil, headers: [:], clientIP: nil)
        #expect(set.name == "DEMO")
        #expect(set.dataAdapter(named: nil) != nil)
    }
}
