import Foundation
import Testing

@testable import lightstreamer

/// The live table's state (`LiveTable`, `RateMeter`) and its renderer, without a terminal.
@Suite struct LiveTableTests {
    static func update(_ item: String, _ values: [String?], key: String? = nil, command: String? = nil) -> LiveTable.Update {
        LiveTable.Update(item: item, values: values, changed: values.map { _ in true }, key: key, command: command)
    }

    /// The visible text of a frame: escape sequences removed, lines by cursor address.
    static func screen(_ bytes: [UInt8], height: Int) -> [String] {
        var lines = Array(repeating: "", count: height + 1)
        let s = String(decoding: bytes, as: UTF8.self)
        var current = 0
        var i = s.startIndex
        while i < s.endIndex {
            if s[i] == "\u{1B}" {
                // ESC [ params final
                var j = s.index(after: i)
                guard j < s.endIndex, s[j] == "[" else {
                    i = j
                    continue
                }
                j = s.index(after: j)
                var params = ""
                while j < s.endIndex, !(s[j].isLetter) {
                    params.append(s[j])
                    j = s.index(after: j)
                }
                if j < s.endIndex, s[j] == "H", let row = Int(params.split(separator: ";").first ?? "") { current = row }
                i = j < s.endIndex ? s.index(after: j) : j
                continue
            }
            if current > 0, current <= height { lines[current].append(s[i]) }
            i = s.index(after: i)
        }
        return Array(lines.dropFirst())
    }

    @Test func mergeRowsAreUpdatedInPlaceAndChangesHighlighted() {
        var t = LiveTable(fields: ["name", "price"])
        t.apply(Self.update("item1", ["A", "1.0"]), now: 1000)
        t.apply(Self.update("item2", ["B", "2.0"]), now: 1000)
        t.apply(Self.update("item1", ["A", "1.5"]), now: 2000)
        #expect(t.rows.map(\.item) == ["item1", "item2"])
        #expect(t.rows[0].values == ["A", "1.5"])
        #expect(t.rows[0].changedAt == [0, 2000])
        #expect(t.totalUpdates == 3)

        let frame = LiveTableRenderer.frame(t, width: 40, height: 6, now: 2100, rate: 12.5)
        let text = String(decoding: frame, as: UTF8.self)
        // The changed cell (and only it) is highlighted.
        #expect(text.contains(LiveTableRenderer.highlight + "1.5  " + LiveTableRenderer.reset))
        #expect(!text.contains(LiveTableRenderer.highlight + "A"))
        let lines = Self.screen(frame, height: 6)
        #expect(lines[0].hasPrefix("item  name price"))
        #expect(lines[1].hasPrefix("item1 A    1.5"))
        #expect(lines[2].hasPrefix("item2 B    2.0"))
        #expect(lines[5].contains("DISCONNECTED"))
        #expect(lines[5].contains("12.5 updates/s"))
        // Later: no highlight.
        let later = String(decoding: LiveTableRenderer.frame(t, width: 40, height: 6, now: 5000, rate: 0), as: UTF8.self)
        #expect(!later.contains(LiveTableRenderer.highlight))
    }

    @Test func commandRowsAreKeysAndDeleteRemovesThem() {
        var t = LiveTable(fields: ["key", "command", "qty"])
        t.apply(Self.update("portfolio1", ["k1", "ADD", "10"], key: "k1", command: "ADD"), now: 1)
        t.apply(Self.update("portfolio1", ["k2", "ADD", "20"], key: "k2", command: "ADD"), now: 1)
        t.apply(Self.update("portfolio1", ["k1", "UPDATE", "15"], key: "k1", command: "UPDATE"), now: 2)
        #expect(t.rows.map { $0.values[0] } == ["k1", "k2"])
        #expect(t.rows[0].values[2] == "15")
        t.apply(Self.update("portfolio1", ["k1", "DELETE", nil], key: "k1", command: "DELETE"), now: 3)
        #expect(t.rows.map { $0.values[0] } == ["k2"])
        t.clear(item: "portfolio1")
        #expect(t.rows.isEmpty)
    }

    @Test func rowsBeyondTheCapAreCountedAndShownAsMore() {
        var t = LiveTable(fields: ["key", "command"], rowCap: 3, hiddenCap: 100)
        for k in 0..<10 {
            t.apply(Self.update("p", ["k\(k)", "ADD"], key: "k\(k)", command: "ADD"), now: 1)
        }
        #expect(t.rows.count == 3)
        #expect(t.hiddenCount == 7)
        t.apply(Self.update("p", ["k9", "DELETE"], key: "k9", command: "DELETE"), now: 2)
        #expect(t.hiddenCount == 6)
        let lines = Self.screen(LiveTableRenderer.frame(t, width: 60, height: 10, now: 2, rate: 0), height: 10)
        #expect(lines.contains { $0.hasPrefix("+6 more") })
        // A short terminal: fewer rows drawn, the rest counted.
        let short = Self.screen(LiveTableRenderer.frame(t, width: 60, height: 4, now: 2, rate: 0), height: 4)
        #expect(short[1].hasPrefix("p"))
        #expect(short[2].hasPrefix("+8 more"))
        #expect(short[3].contains("9 rows"))
    }

    @Test func columnsFitTheWidthAndLongValuesAreCut() {
        var t = LiveTable(fields: ["a", "b", "c"])
        t.apply(Self.update("i", [String(repeating: "x", count: 30), "short", String(repeating: "y", count: 30)]), now: 1)
        let lines = Self.screen(LiveTableRenderer.frame(t, width: 40, height: 5, now: 1, rate: 0), height: 5)
        for line in lines { #expect(line.count <= 40, "\(line)") }
        #expect(lines[1].contains("short"))
        #expect(lines[1].contains("…"))
        // Fair shares: narrow columns keep their width.
        #expect(LiveTableRenderer.fit([4, 30, 5, 30], into: 40) == [4, 14, 5, 14])
        #expect(LiveTableRenderer.fit([4, 5], into: 40) == [4, 5])
        #expect(LiveTableRenderer.fit([10, 10, 10], into: 5).reduce(0, +) <= 3)
    }

    @Test func controlCharactersFromTheNetworkAreNotWrittenToTheTerminal() {
        var t = LiveTable(fields: ["v"])
        t.apply(Self.update("i", ["a\u{1B}[2Jb\u{9B}c\u{7}"]), now: 1)
        let text = String(decoding: LiveTableRenderer.frame(t, width: 40, height: 4, now: 1, rate: 0), as: UTF8.self)
        #expect(!text.contains("\u{1B}[2J"))
        #expect(!text.contains("\u{7}"))
        #expect(text.contains("a?[2Jb?c?"))
    }

    @Test func rateIsOverTheLastSecond() {
        var m = RateMeter()
        #expect(m.sample(now: 1000, total: 0) == 0)
        #expect(m.sample(now: 1500, total: 50) == 100)
        #expect(m.sample(now: 2000, total: 100) == 100)
        // Nothing for 2 s: the window starts at the last sample at or before now - 1 s.
        let r = m.sample(now: 4000, total: 100)
        #expect(r < 50)
        #expect(LiveTableRenderer.formatRate(12.34) == "12.3")
        #expect(LiveTableRenderer.formatRate(1234.4) == "1234")
    }
}
