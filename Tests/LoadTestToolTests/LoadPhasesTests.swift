import LightstreamerServer
import NIOConcurrencyHelpers
import Testing

@testable import lightstreamer_loadtest

/// The LOAD adapter's phases (`--phases`): which items each tick updates.
struct LoadPhasesTests {
    @Test func itemsGoInGroupsOfConsecutiveNumbers() {
        // 100 items in 10 phases: load0…load9 first, load90…load99 last.
        #expect((0..<100).map { LoadPhases.phase(of: "load\($0)", itemCount: 100, phases: 10) } == (0..<100).map { $0 / 10 })
        // Groups of unequal size when the phases do not divide the items; every phase used.
        let seven = (0..<100).map { LoadPhases.phase(of: "load\($0)", itemCount: 100, phases: 7) }
        #expect(Set(seven) == Set(0..<7))
        #expect(seven == seven.sorted())
        // One phase: everything at once.
        #expect((0..<100).allSatisfy { LoadPhases.phase(of: "load\($0)", itemCount: 100, phases: 1) == 0 })
    }

    @Test func namesOutsideTheItemsAreInTheFirstPhase() {
        for name in ["load100", "load-1", "item3", "load", "", "load99999999999999999999999", "LOAD5"] {
            #expect(LoadPhases.phase(of: name, itemCount: 100, phases: 10) == 0, "\(name)")
        }
        #expect(LoadPhases.phase(of: "load\(Int.max - 1)", itemCount: .max, phases: 1_000) <= 999)
    }

    @Test func eachTickUpdatesItsPhaseAndAPeriodUpdatesEveryItemOnce() async throws {
        let adapter = LoadDataAdapter(itemCount: 100, rate: 10, phases: 10)
        let recorder = BatchRecorder()
        adapter.setListener(recorder)
        for k in 0..<100 { try await adapter.subscribe(item: "load\(k)") }
        for phase in 0..<10 { adapter.tick(phase: phase) }
        let batches = recorder.batches
        #expect(batches.count == 10)
        for (phase, batch) in batches.enumerated() {
            #expect(Set(batch) == Set((phase * 10..<phase * 10 + 10).map { "load\($0)" }), "phase \(phase)")
        }
        // Unsubscribed items leave their phase.
        await adapter.unsubscribe(item: "load3")
        adapter.tick(phase: 0)
        #expect(Set(recorder.batches.last ?? []) == Set([0, 1, 2, 4, 5, 6, 7, 8, 9].map { "load\($0)" }))
    }

    @Test func onePhaseUpdatesEverythingInOneTick() async throws {
        let adapter = LoadDataAdapter(itemCount: 100, rate: 10)
        let recorder = BatchRecorder()
        adapter.setListener(recorder)
        for k in 0..<100 { try await adapter.subscribe(item: "load\(k)") }
        adapter.tick(phase: 0)
        #expect(recorder.batches.count == 1)
        #expect(recorder.batches.first?.count == 100)
    }

    @Test func theOptionIsChecked() {
        #expect(throws: (any Error).self) { try LoadTestCommand.parse(["--phases", "0"]) }
        #expect(throws: (any Error).self) { try LoadTestCommand.parse(["--phases", "101"]) }
        #expect(throws: (any Error).self) { try LoadTestCommand.parse(["--items", "20", "--phases", "21"]) }
        #expect(throws: (any Error).self) { try LoadTestCommand.parse(["--rate", "0"]) }
        #expect(throws: (any Error).self) { try LoadTestCommand.parse(["--rate", "nan"]) }
        #expect((try? LoadTestCommand.parse(["--phases", "10"]))?.phases == 10)
        #expect((try? LoadTestCommand.parse(["--items", "20", "--phases", "20"]))?.phases == 20)
    }
}

/// Records the batches a Data Adapter sends, as item names.
private final class BatchRecorder: ItemEventListener {
    private let state = NIOLockedValueBox<[[String]]>([])
    var batches: [[String]] { state.withLockedValue { $0 } }

    func update(_ batch: [ItemUpdateEvent]) {
        state.withLockedValue { $0.append(batch.map(\.item)) }
    }
    // An update on its own counts as a batch of one.
    func update(item: String, fields: [String: String?], isSnapshot: Bool) { state.withLockedValue { $0.append([item]) } }
    func endOfSnapshot(item: String) {}
    func clearSnapshot(item: String) {}
    func failure(_ error: any Error) {}
}
