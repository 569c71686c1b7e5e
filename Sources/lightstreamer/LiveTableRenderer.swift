/// Turns a `LiveTable` into the bytes of one full screen (a pure function: no I/O, no clock).
///
/// Layout on a `width` × `height` terminal: a bold header row, one line per row (the last
/// visible line says "+N more" when rows do not fit or were not kept), and a status line in
/// reverse video at the bottom: client status, updates/s, rows. Each line is written at its
/// own cursor address (`ESC [ row ; 1 H`) and ended with `ESC [ K`, the rest of the screen is
/// cleared with `ESC [ J`: the frame does not depend on what the screen showed before.
///
/// Columns get their natural width (the widest of the header and the visible cells, at most
/// `maxColumnWidth`) when they fit, else a fair share of the width (narrow columns keep
/// theirs, wide ones share the rest); longer text is cut and ends with `…`. Values come from
/// the network: control characters are shown as `?` so they cannot move the cursor or change
/// the terminal's state. A cell changed less than `highlightMillis` ago is drawn highlighted.
enum LiveTableRenderer {
    static let maxColumnWidth = 40
    static let highlightMillis: UInt64 = 800

    static let esc = "\u{1B}["
    static let bold = "\u{1B}[1m"
    static let reverse = "\u{1B}[7m"
    static let highlight = "\u{1B}[30;43m"
    static let reset = "\u{1B}[0m"

    /// The bytes to enter the table screen: alternate screen, cursor hidden, cleared.
    static let enter = Array("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J".utf8)
    /// The bytes to give the terminal back: cursor shown, main screen, attributes reset.
    static let leave = Array("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l".utf8)

    static func frame(_ t: LiveTable, width: Int, height: Int, now: UInt64, rate: Double) -> [UInt8] {
        let width = max(1, min(width, 1000))
        let height = max(2, min(height, 1000))
        var out = ""
        out.reserveCapacity(width * height + 256)
        var line = 1

        // Rows that fit between the header and the status line.
        let body = height - 2
        let hiddenTotal = t.hiddenCount
        let rowsShown: Int
        let moreCount: Int
        if t.rows.count + (hiddenTotal > 0 ? 1 : 0) <= body {
            rowsShown = t.rows.count
            moreCount = hiddenTotal
        } else {
            rowsShown = max(0, body - 1)
            moreCount = t.rows.count - rowsShown + hiddenTotal
        }
        let visible = t.rows.prefix(rowsShown)

        // Column widths.
        let titles = ["item"] + t.columns
        var natural = titles.map { min(maxColumnWidth, cellWidth($0)) }
        for r in visible {
            natural[0] = max(natural[0], min(maxColumnWidth, cellWidth(r.item)))
            for (c, v) in r.values.enumerated() where c + 1 < natural.count {
                natural[c + 1] = max(natural[c + 1], min(maxColumnWidth, cellWidth(v ?? "∅")))
            }
        }
        let widths = fit(natural, into: width)

        // Header.
        out += address(line)
        out += bold
        out += joined(titles.map { $0 }, widths)
        out += reset + esc + "K"
        line += 1

        for r in visible {
            out += address(line)
            var cells: [String] = []
            var lit: [Bool] = []
            cells.append(r.item)
            lit.append(false)
            for c in 0..<t.columns.count {
                cells.append(c < r.values.count ? (r.values[c] ?? "∅") : "")
                let at = c < r.changedAt.count ? r.changedAt[c] : 0
                lit.append(at > 0 && now >= at && now - at < highlightMillis)
            }
            out += joined(cells, widths, highlighted: lit)
            out += esc + "K"
            line += 1
        }
        if moreCount > 0 || t.hiddenOverflow {
            out += address(line)
            out += cut("+\(moreCount)\(t.hiddenOverflow ? "+" : "") more", width)
            out += esc + "K"
            line += 1
        }
        // Clear what is left of the body, then the status line at the bottom.
        out += address(line) + esc + "J"
        let status = " \(t.status)  │  \(formatRate(rate)) updates/s  │  \(t.rows.count + hiddenTotal) rows  │  Ctrl-C to quit"
        out += address(height) + reverse + pad(cut(status, max(1, width - 1)), max(1, width - 1)) + reset + esc + "K"
        return Array(out.utf8)
    }

    static func address(_ line: Int) -> String { "\(esc)\(line);1H" }

    static func formatRate(_ r: Double) -> String {
        guard r.isFinite, r >= 0 else { return "0" }
        if r >= 100 { return String(Int(r.rounded())) }
        let tenths = Int((r * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Widths summing to at most `width` with one space between columns; columns that get no
    /// room get 0 and are not drawn.
    static func fit(_ natural: [Int], into width: Int) -> [Int] {
        let n = natural.count
        guard n > 0 else { return [] }
        let available = width - (n - 1)
        if natural.reduce(0, +) <= available { return natural }
        var result = Array(repeating: 0, count: n)
        var remaining = max(0, available)
        var open = Array(0..<n).sorted { natural[$0] < natural[$1] }
        while !open.isEmpty {
            let share = remaining / open.count
            let i = open[0]
            if natural[i] <= share {
                result[i] = natural[i]
            } else {
                // Every column left is wider than the share: split what is left evenly.
                let extra = remaining - share * open.count
                for (k, j) in open.enumerated() { result[j] = share + (k < extra ? 1 : 0) }
                return result
            }
            remaining -= result[i]
            open.removeFirst()
        }
        return result
    }

    /// Cells padded to their widths, one space apart; 0-width columns left out.
    static func joined(_ cells: [String], _ widths: [Int], highlighted: [Bool] = []) -> String {
        var s = ""
        var first = true
        for (c, w) in widths.enumerated() where w > 0 {
            if !first { s += " " }
            first = false
            let text = pad(cut(c < cells.count ? cells[c] : "", w), w)
            if c < highlighted.count, highlighted[c] {
                s += highlight + text + reset
            } else {
                s += text
            }
        }
        return s
    }

    /// Control characters (C0, DEL, C1) as `?`.
    static func clean(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isControl) else { return s }
        return String(String.UnicodeScalarView(s.unicodeScalars.map { isControl($0) ? "?" : $0 }))
    }

    static func isControl(_ u: Unicode.Scalar) -> Bool {
        u.value < 0x20 || (u.value >= 0x7F && u.value < 0xA0)
    }

    /// Display width, counted in characters (each taken as one column), at most
    /// `maxColumnWidth + 1` (long values are not counted to their end).
    static func cellWidth(_ s: String) -> Int { s.prefix(maxColumnWidth + 1).count }

    /// `s` (cleaned) in at most `w` characters: cut to `w - 1` and `…` when longer.
    static func cut(_ s: String, _ w: Int) -> String {
        guard w > 0 else { return "" }
        let s = clean(String(s.prefix(w + 1)))
        if s.count <= w { return s }
        return String(s.prefix(w - 1)) + "…"
    }

    static func pad(_ s: String, _ w: Int) -> String {
        let n = s.count
        return n >= w ? s : s + String(repeating: " ", count: w - n)
    }
}
