import Testing

@testable import LightstreamerServer

@Suite struct SessionInboxTests {
    static func update(_ item: Int, _ value: String, snapshot: Bool = false) -> TableEvent {
        .update(item: item, values: [value], isSnapshot: snapshot)
    }

    /// An inbox where events of another subscription (99, never folded) already wait.
    static func behind() -> SessionInbox {
        var inbox = SessionInbox()
        for i in 0..<16 { inbox.append(99, update(1, "fill\(i)"), mergeable: false) }
        return inbox
    }

    static func values(_ entries: [SessionInbox.Entry], subscription: Int) -> [String] {
        entries.filter { $0.subscriptionId == subscription }.map { entry in
            switch entry.event.tableEvent {
            case .update(let item, let values, let snapshot): "\(item)=\(values.first.flatMap { $0 } ?? "nil")\(snapshot ? "S" : "")"
            case .endOfSnapshot(let item): "EOS\(item)"
            case .clearSnapshot(let item): "CS\(item)"
            case .overflow(let item, let lost): "OV\(item):\(lost)"
            }
        }
    }

    /// Updates of different items all wait; nothing is counted as folded.
    @Test func updatesOfDifferentItemsAllWait() {
        var inbox = SessionInbox()
        for item in 1...3 { inbox.append(1, Self.update(item, "v\(item)"), mergeable: true) }
        #expect(Self.values(inbox.take(), subscription: 1) == ["1=v1", "2=v2", "3=v3"])
        #expect(inbox.takeConflatedCount() == 0)
    }

    /// The second update of an item replaces the first even when nothing else waits: an item
    /// never goes out twice, its older row first (until 2026-12-01 folding started only
    /// once 16 events waited, and this gave three updates).
    @Test func anItemsUpdatesFoldFromTheFirstThatWaits() {
        var inbox = SessionInbox()
        for v in ["a", "b", "c"] { inbox.append(1, Self.update(1, v), mergeable: true) }
        #expect(Self.values(inbox.take(), subscription: 1) == ["1=c"])
        #expect(inbox.takeConflatedCount() == 2)
    }

    @Test func behindLatestValuesOfEachMergeItemWin() {
        var inbox = Self.behind()
        for v in ["a", "b", "c"] {
            inbox.append(1, Self.update(1, v), mergeable: true)
            inbox.append(1, Self.update(2, v.uppercased()), mergeable: true)
        }
        #expect(Self.values(inbox.take(), subscription: 1) == ["1=c", "2=C"])
        #expect(inbox.takeConflatedCount() == 4)
        // Empty afterwards: what was taken is not replaced by what comes next.
        inbox.append(1, Self.update(1, "x"), mergeable: true)
        #expect(Self.values(inbox.take(), subscription: 1) == ["1=x"])
        inbox.append(1, Self.update(1, "y"), mergeable: true)
        #expect(Self.values(inbox.take(), subscription: 1) == ["1=y"])
    }

    @Test func unfilteredAndOtherModesAreNeverFolded() {
        var inbox = Self.behind()
        for v in ["a", "b", "c"] { inbox.append(2, Self.update(1, v), mergeable: false) }
        #expect(Self.values(inbox.take(), subscription: 2) == ["1=a", "1=b", "1=c"])
    }

    @Test func snapshotsAndOtherEventsKeepTheirPlace() {
        var inbox = Self.behind()
        inbox.append(1, Self.update(1, "snap", snapshot: true), mergeable: true)
        inbox.append(1, Self.update(1, "a"), mergeable: true)
        inbox.append(1, Self.update(1, "b"), mergeable: true)
        inbox.append(1, .clearSnapshot(item: 1), mergeable: true)
        inbox.append(1, Self.update(1, "c"), mergeable: true)
        inbox.append(1, .overflow(item: 1, lost: 2), mergeable: true)
        inbox.append(1, Self.update(1, "d"), mergeable: true)
        inbox.append(1, Self.update(1, "e"), mergeable: true)
        #expect(Self.values(inbox.take(), subscription: 1) == ["1=snapS", "1=b", "CS1", "1=c", "OV1:2", "1=e"])
    }

    /// An update the engine sent as the encoding alone (`EngineEvent.shared`) waits in that
    /// form, folds like any other, and a snapshot in that form is never folded.
    @Test func sharedUpdatesWaitAsTheyCameAndFold() {
        func shared(_ item: Int, _ value: String, snapshot: Bool = false) -> EngineEvent {
            .shared(item: item, isSnapshot: snapshot, encoding: SharedUpdateEncoding(previous: nil, values: [value]))
        }
        var inbox = SessionInbox()
        inbox.append(1, shared(1, "a"), mergeable: true)
        var entries = inbox.take()
        #expect(Self.values(entries, subscription: 1) == ["1=a"])
        #expect(entries.allSatisfy { if case .shared = $0.event { true } else { false } })

        inbox = Self.behind()
        inbox.append(1, shared(1, "snap", snapshot: true), mergeable: true)
        inbox.append(1, shared(1, "a"), mergeable: true)
        inbox.append(1, Self.update(1, "b"), mergeable: true)
        inbox.append(1, shared(1, "c"), mergeable: true)
        inbox.append(1, shared(2, "x"), mergeable: true)
        entries = inbox.take()
        #expect(Self.values(entries, subscription: 1) == ["1=snapS", "1=c", "2=x"])
        #expect(inbox.takeConflatedCount() == 2)
        let forms = entries.filter { $0.subscriptionId == 1 }.map { if case .shared = $0.event { "shared" } else { "event" } }
        #expect(forms == ["shared", "shared", "shared"])
    }

    @Test func subscriptionsDoNotFoldIntoEachOther() {
        var inbox = Self.behind()
        inbox.append(1, Self.update(1, "a"), mergeable: true)
        inbox.append(3, Self.update(1, "b"), mergeable: true)
        inbox.append(1, Self.update(1, "c"), mergeable: true)
        let entries = inbox.take()
        #expect(Self.values(entries, subscription: 1) == ["1=c"])
        #expect(Self.values(entries, subscription: 3) == ["1=b"])
    }
}
