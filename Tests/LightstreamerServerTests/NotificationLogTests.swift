import Testing

@testable import LightstreamerServer

/// The recovery log: progressives stay addressable while held, pruning frees from the front
/// only what is delivered and out of the window, and the byte count follows what is held.
@Suite struct NotificationLogTests {
    @Test func entriesStayAddressableAcrossManyPrunes() {
        var log = NotificationLog()
        var delivered = 0
        for i in 1...5_000 {
            #expect(log.append("U,1,1,\(i)", isUpdate: true, now: Int64(i)) == i)
            delivered = i - 3 // the last three are not delivered yet
            log.prune(delivered: delivered, now: Int64(i), windowMillis: 100, maxCount: 1_000)
            // Delivered entries younger than the window are held, undelivered ones always.
            #expect(log.firstProgressive == max(1, i - 100))
            #expect(log.entry(i)?.line == "U,1,1,\(i)")
            #expect(log.entry(log.firstProgressive)?.line == "U,1,1,\(log.firstProgressive)")
        }
        #expect(log.entry(log.firstProgressive - 1) == nil)
        #expect(log.entry(5_001) == nil)
        #expect(log.count == 101)
        let expectedBytes = (4_900...5_000).reduce(0) { $0 + "U,1,1,\($1)".utf8.count }
        #expect(log.heldBytes == expectedBytes)
        #expect(log.holdsEverything(after: 4_899))
        #expect(!log.holdsEverything(after: 4_898))
    }

    @Test func aSlotIsSixteenBytes() {
        #expect(NotificationLog.slotBytes == 16)
    }

    /// Slots keep their times in 32 bits after the log's base time: lines logged more than 24
    /// days apart move the base on, and the window still counts from each line's own time.
    @Test func timesFarApartMoveTheBaseOn() {
        var log = NotificationLog()
        let far: Int64 = 3_000_000_000 // 34.7 days in milliseconds: past 2^31
        _ = log.append("old", isUpdate: true, now: 5)
        _ = log.append("older copy kept", isUpdate: false, now: 10)
        let copy = log
        _ = log.append("new", isUpdate: true, now: far)
        _ = log.append("newer", isUpdate: false, now: far + 700)
        #expect(log.entry(3)?.atMillis == far)
        #expect(log.entry(4)?.atMillis == far + 700)
        #expect(log.entry(4)?.isUpdate == false && log.entry(3)?.isUpdate == true)
        // Lines from before the move keep the earliest time that fits: long out of the window.
        #expect((log.entry(1)?.atMillis ?? .max) <= far - Int64(Int32.max))
        // A copy that shared the slots before the move keeps its own times.
        #expect(copy.entry(1)?.atMillis == 5 && copy.entry(2)?.atMillis == 10)
        log.prune(delivered: 4, now: far + 1_000, windowMillis: 500, maxCount: 100)
        #expect(log.firstProgressive == 4, "the two old lines and the one 1,000 ms old go; the one 300 ms old stays")
        #expect(log.entry(4)?.line == "newer")
        // Backwards too (the clock a test gives): times before the base fit as well.
        var back = NotificationLog()
        _ = back.append("a", isUpdate: true, now: 1_000)
        _ = back.append("b", isUpdate: true, now: 400)
        #expect(back.entry(2)?.atMillis == 400)
    }

    @Test func countLimitAndDropDeliveredNeverDropUndelivered() {
        var log = NotificationLog()
        for i in 1...50 { _ = log.append("line\(i)", isUpdate: i % 2 == 0, now: 0) }
        log.prune(delivered: 40, now: 0, windowMillis: 1_000_000, maxCount: 20)
        #expect(log.firstProgressive == 31)
        #expect(log.count == 20)
        log.dropDelivered(45)
        #expect(log.firstProgressive == 46)
        #expect(log.entry(46)?.line == "line46")
        #expect(log.entry(46)?.isUpdate == true)
        log.dropDelivered(50)
        #expect(log.count == 0)
        #expect(log.heldBytes == 0)
        #expect(log.lastProgressive == 50)
        #expect(log.holdsEverything(after: 50))
    }
}

/// Lines are kept once, with their CR-LFs, in pages that the session's output reads its writes
/// from (`LogPage`, `NotificationLog.span(of:)`).
@Suite struct LogPageTests {
    /// The bytes `span(of:)` gives for `progressive`.
    private func spanText(_ log: NotificationLog, _ progressive: Int) -> String? {
        guard let location = log.locate(progressive), let span = log.span(of: location) else { return nil }
        return span.text
    }

    @Test func eachLineIsFollowedByItsLineEndAndConsecutiveLinesOfAPageAreContiguous() throws {
        var log = NotificationLog()
        var spans: [LogPage.Span] = []
        // Lines of every length up to past a whole page, so that pages close at every offset.
        for i in 1...300 {
            let line = "U,1,1," + String(repeating: "x", count: (i * 37) % 5_000)
            #expect(log.append(line, isUpdate: true, now: 0) == i)
            #expect(spanText(log, i) == line + "\r\n")
            #expect(log.entry(i)?.line == line)
            let location = try #require(log.locate(i))
            #expect(location.length == line.utf8.count)
            let span = try #require(log.span(of: location))
            if let previous = spans.last, previous.page === span.page {
                #expect(previous.end == span.start)
            }
            spans.append(span)
        }
        // Every line is still where its span says, whatever came after it.
        for (i, span) in spans.enumerated() {
            #expect(span.text == "U,1,1," + String(repeating: "x", count: ((i + 1) * 37) % 5_000) + "\r\n")
        }
        // A line longer than a page got a page of its own size.
        #expect(spans.contains { $0.count > NotificationLog.pageBytes })
    }

    @Test func aSpanOutlivesThePruneThatDropsItsPage() throws {
        var log = NotificationLog()
        _ = log.append("U,1,1,first", isUpdate: true, now: 0)
        let span = try #require(log.locate(1).flatMap { log.span(of: $0) })
        log.dropDelivered(1)
        #expect(log.count == 0)
        #expect(log.locate(1) == nil)
        #expect(span.text == "U,1,1,first\r\n")
        // The next line starts a page of its own.
        _ = log.append("U,1,1,second", isUpdate: true, now: 0)
        #expect(spanText(log, 2) == "U,1,1,second\r\n")
        #expect(span.text == "U,1,1,first\r\n")
    }

    /// A log that held a stream's window and was pruned down keeps no slots' buffer for it:
    /// a session whose client went away kept 4 KB of empty slots.
    @Test func aPrunedLogGivesBackItsSlots() {
        var log = NotificationLog()
        for i in 1...500 { _ = log.append("U,1,1,\(i)", isUpdate: true, now: Int64(i)) }
        #expect(log.slotCapacity == 512)
        // The window keeps the last 100 (times 401...500): twice that, rounded up.
        log.prune(delivered: 500, now: 500, windowMillis: 99, maxCount: 1_000)
        #expect(log.slotCapacity == 256)
        #expect(log.entry(401)?.line == "U,1,1,401" && log.entry(400) == nil)
        log.dropDelivered(500)
        #expect(log.slotCapacity == 0 && log.heldBytes == 0)
    }

    @Test func anIdleLogHoldsNoPage() {
        var log = NotificationLog()
        #expect(log.locate(1) == nil)
        #expect(log.entry(0) == nil)
        _ = log.append("x", isUpdate: false, now: 0)
        log.dropDelivered(1)
        #expect(log.heldBytes == 0)
        #expect(log.entry(1) == nil)
    }

    /// A batch of updates goes out as one write, read from the log's pages, with the same lines
    /// a session writing each update on its own sends (page boundaries included), and with
    /// the other lines of the batch in their places.
    @Test func aBatchWrittenFromLogPagesCarriesTheSameLinesInOrder() {
        var one = SessionScript.subscribed(items: 3, fields: 2)
        var batch = SessionScript.subscribed(items: 3, fields: 2)
        var events: [(subscriptionId: Int, event: TableEvent)] = []
        for i in 0..<400 {
            let item = i % 3 + 1
            let wide = String(repeating: "v", count: (i * 53) % 700)
            events.append((1, .update(item: item, values: ["\(i)", i % 7 == 0 ? nil : wide], isSnapshot: false)))
            if i % 97 == 0 { events.append((1, .overflow(item: item, lost: i + 1))) }
            if i % 131 == 0 { events.append((1, .clearSnapshot(item: item))) }
        }
        for (id, e) in events { one.record(one.machine.tableEvent(id, e, now: one.now)) }
        let actions = batch.machine.tableEvents(events, now: batch.now)
        batch.record(actions)
        let expected = one.take()
        #expect(expected.count > 400)
        #expect(batch.take() == expected)
        let writes = actions.compactMap { a -> (String, Int)? in
            if case .write(_, let text, let updates) = a { (text, updates) } else { nil }
        }
        #expect(writes.count == 1)
        #expect(writes.first?.1 == 400)
        #expect(writes.first?.0.hasSuffix("\r\n") == true)
    }
}

extension LogPageTests {
    /// A batch's lines wait for its end to go out together (`SessionStateMachine.endBatch`).
    /// When the log passes `maxBacklogBytes` meanwhile, what was delivered before is dropped
    /// first, as one by one: lines held back for the batch's write count as delivered, so a
    /// stream that reads closes no sooner in a batch, and one that cannot take its lines (a
    /// bandwidth limit) closes at the same line either way.
    @Test(arguments: [nil, 0.1] as [Double?])
    func aBatchPassingTheBacklogLimitEndsAsOneByOne(kbps: Double?) {
        var settings = SessionScript.settings
        settings.maxBacklogBytes = 2_000
        func script() -> SessionScript {
            var s = SessionScript.subscribed(items: 2, fields: 2, settings: settings)
            if let kbps { s.control(.constrain(maxBandwidth: .kbps(kbps)), id: "bw", ack: false) }
            _ = s.take()
            return s
        }
        var one = script()
        var batch = script()
        let events: [(subscriptionId: Int, event: TableEvent)] = (0..<200).map { i in
            (1, .update(item: i % 2 + 1, values: ["\(i)", String(repeating: "z", count: 40 + i % 9)], isSnapshot: false))
        }
        for (id, e) in events { one.record(one.machine.tableEvent(id, e, now: one.now)) }
        batch.record(batch.machine.tableEvents(events, now: batch.now))
        let expected = one.take()
        #expect(batch.take() == expected)
        #expect(batch.machine.isClosed == one.machine.isClosed)
        // Read as it goes, the stream carries every update; held back, it closes (END 32).
        #expect(one.machine.isClosed == (kbps != nil))
        #expect(expected.filter { $0.hasPrefix("U,") }.count == (kbps == nil ? 200 : expected.count - 1))
    }

    /// A line longer than `maxBacklogBytes` closes the session however well it reads, in a
    /// batch as one by one: it is not delivered yet when the limit is checked.
    @Test func aLineOverTheBacklogLimitClosesInABatchToo() {
        var settings = SessionScript.settings
        settings.maxBacklogBytes = 2_000
        var one = SessionScript.subscribed(items: 1, fields: 1, settings: settings)
        var batch = SessionScript.subscribed(items: 1, fields: 1, settings: settings)
        let events: [(subscriptionId: Int, event: TableEvent)] = [100, 2_500, 100].map { n in
            (1, .update(item: 1, values: [String(repeating: "q", count: n)], isSnapshot: false))
        }
        for (id, e) in events { one.record(one.machine.tableEvent(id, e, now: one.now)) }
        batch.record(batch.machine.tableEvents(events, now: batch.now))
        let expected = one.take()
        #expect(one.machine.isClosed)
        #expect(expected.count == 2 && expected.last?.hasPrefix("END,32,") == true)
        #expect(batch.take() == expected)
        #expect(batch.machine.isClosed)
    }

    /// Lines of every length around a page's end (text lines and shared `U` lines, whose head
    /// the log counts only near the end, `DataLine.maxByteCount`): each reads back whole, and
    /// the pages between them hold their lines back to back.
    @Test func linesAtPageBoundariesReadBackWhole() {
        var log = NotificationLog()
        var expected: [String] = []
        let encoded = Array("v|w|x".utf8)
        encoded.withUnsafeBufferPointer { encoded in
            for i in 0..<3_000 {
                if i % 3 == 0 {
                    // Heads of 6 to 12 bytes: `U,<id>,<item>,`.
                    let id = [1, 42, 12_345][i % 9 / 3], item = i % 1_000 + 1
                    _ = log.append(.update(subscriptionId: id, item: item, encoded: encoded), isUpdate: true, now: 0)
                    expected.append("U,\(id),\(item),v|w|x")
                } else {
                    let line = "OV,1,1," + String(repeating: "z", count: (i * 37) % 130)
                    _ = log.append(line, isUpdate: false, now: 0)
                    expected.append(line)
                }
            }
        }
        for (offset, line) in expected.enumerated() {
            #expect(log.entry(offset + 1)?.line == line, "line \(offset + 1)")
        }
    }

    /// The first page (`firstPageBytes`) filled so that the next line has from one byte too few
    /// to one byte more than it needs with its CR-LF: it reads back whole either way, and shares
    /// the page (one run with the line before) exactly when it fits.
    @Test(arguments: -2...2)
    func aLineJustFittingOrNotFittingThePage(spare: Int) {
        let encoded = Array("v|w".utf8)
        let next = "U,7,3,v|w" // the shared line below, 9 bytes
        for shared in [false, true] {
            var log = NotificationLog()
            let first = String(repeating: "a", count: NotificationLog.firstPageBytes - 2 - (next.utf8.count + 2 + spare))
            _ = log.append(first, isUpdate: false, now: 0)
            if shared {
                encoded.withUnsafeBufferPointer {
                    _ = log.append(.update(subscriptionId: 7, item: 3, encoded: $0), isUpdate: true, now: 0)
                }
            } else {
                _ = log.append(next, isUpdate: true, now: 0)
            }
            #expect(log.entry(1)?.line == first)
            #expect(log.entry(2)?.line == next, "spare \(spare), shared \(shared)")
            #expect((log.run(after: 0)?.lines ?? 0) == (spare >= 0 ? 2 : 1), "spare \(spare), shared \(shared)")
        }
    }

    @Test func readsAreClampedToWhatWasWritten() {
        let page = LogPage(capacity: 16)
        _ = page.append(.text("abc"))
        #expect(LogPage.Span(page: page, start: 0, end: 99).text == "abc\r\n")
        #expect(LogPage.Span(page: page, start: 3, end: 1).text == "")
        #expect(LogPage.Span(page: page, start: 3, end: 1).count == 0)
        #expect(LogPage.Span(page: page, start: -5, end: 2).text == "ab")
        #expect(page.free == 11)
    }
}

/// Runs of lines (`NotificationLog.run(after:maxBytes:)`): what a stream with no bandwidth limit
/// writes at once instead of line by line.
@Suite struct NotificationLogRunTests {
    /// Every run is the lines that follow in one page, back to back, cut at `maxBytes`; taken
    /// one after another, the runs give every held line once, in order, with the right count
    /// of updates.
    @Test func runsCoverTheHeldLinesInOrderPageByPage() throws {
        var log = NotificationLog()
        var lines: [String] = []
        for i in 1...500 {
            let line = (i % 5 == 0 ? "OV,1,1," : "U,1,1,") + String(repeating: "y", count: (i * 29) % 900)
            lines.append(line)
            _ = log.append(line, isUpdate: i % 5 != 0, now: 0)
        }
        for maxBytes in [Int.max, 1_000, 64] {
            var delivered = 0
            var text = ""
            var updates = 0
            var pages = 0
            var previous: LogPage?
            while delivered < log.lastProgressive {
                let run = try #require(log.run(after: delivered, maxBytes: maxBytes))
                if run.lines == 0 {
                    // Only a line longer than the cap stops a run before its first line.
                    let line = try #require(log.locate(delivered + 1))
                    #expect(line.length + 2 > maxBytes)
                    text += try #require(log.span(of: line)).text
                    updates += line.isUpdate ? 1 : 0
                    delivered += 1
                    continue
                }
                #expect(run.span.count <= maxBytes)
                if run.span.page !== previous { pages += 1 }
                previous = run.span.page
                text += run.span.text
                updates += run.updates
                delivered += run.lines
            }
            #expect(text == lines.map { $0 + "\r\n" }.joined())
            #expect(updates == 400)
            if maxBytes == .max {
                // Uncapped, a run ends only where its page does.
                #expect(pages > 1)
                #expect(log.run(after: 0).map { $0.lines } ?? 0 < 500)
            }
        }
        #expect(log.run(after: 500) == nil)
        log.dropDelivered(100)
        #expect(log.run(after: 99) == nil)
        #expect(log.run(after: 100)?.span.text.hasPrefix(lines[100] + "\r\n") == true)
    }
}
