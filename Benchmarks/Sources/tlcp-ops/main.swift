// Runs one TLCP codec operation N times, for instruction counts under callgrind
// (Benchmarks/tlcp-callgrind.sh) or a quick wall-clock figure. Fixture: the same 10-field
// MERGE rows as the TLCPBenchmarks suite, and its 110-byte JSON field.
import ARI
import TLCP

let rows: [[String?]] = (0..<64).map { i in
    let price = 100 + Double(i % 17) / 4
    return [
        "ACME Corp", String(price), "12:00:\(10 + i % 50)", String(Double(i % 9) / 10), String(1000 + i % 3 * 500),
        String(price - 0.05), String(price + 0.05), i % 4 == 0 ? "2500" : "3000", "99.5", "103.25",
    ]
}
// One 110-byte JSON field where two numbers change (the TLCPBenchmarks suite's JSON fixture).
let documents: [[String?]] = (0..<16).map { i in
    [#"{"symbol":"ACME","bid":\#(100 + i),"ask":\#(101 + i),"venue":"XNAS","book":[{"p":100,"q":5},{"p":99,"q":7}],"ts":1700000000}"#]
}
// The same field where numbers at both ends change, too far apart for a short `^T`: `^P` wins.
let spreadDocuments: [[String?]] = (0..<16).map { i in
    [
        #"{"bid":\#(100 + i),"symbol":"ACME","venue":"XNAS","book":[{"p":100,"q":5},{"p":99,"q":7}],"name":"Acme Corporation","ts":\#(1700000000 + i)}"#
    ]
}
// A JSON object of 1,000 members (16 KB), in 16 versions that each set another member to 1.
let wideDocuments: [[String?]] = (0..<16).map { v in
    ["{" + (0..<1_000).map { #""member\#($0)":\#($0 == v * 61 ? 1 : 0)"# }.joined(separator: ",") + "}"]
}
// A 60-character text with accents and a euro sign where one price changes (`^T` wins).
let texts: [[String?]] = (0..<16).map { i in ["Café crème à Zürich, été \(2026 + i % 3): prix \(12 + i),50 € (ÉTÉ)"] }
/// A fixture's rows as `U` lines, each encoded against the row before (the first in full).
func encodedLines(_ rows: [[String?]], diffs: Set<DiffFormat>) -> [String] {
    var previous: [String?]? = nil
    return rows.map { row in
        defer { previous = row }
        return UpdateNotification(subscriptionId: 1, item: 1, values: UpdateCodec.encode(previous: previous, current: row, diffs: diffs))
            .encoded()
    }
}
let lines = encodedLines(rows, diffs: [])
// The JSON field's updates as a server allowing diffs sends them (`^T` lines after the first),
// and the field changed at both ends as a server allowing only JSON Patch sends it (`^P`).
let documentLines = encodedLines(documents, diffs: [.tlcpDiff])
let spreadLines = encodedLines(spreadDocuments, diffs: [.jsonPatch])
// The accented text's updates as `^T` lines (text beyond ASCII, within the BMP).
let textLines = encodedLines(texts, diffs: [.tlcpDiff])
// The 64 stock rows as an HTTP streaming body (and as one WebSocket message), read in 1 KiB pieces that cut lines anywhere.
let streamBody = Array(lines.map { $0 + "\r\n" }.joined().utf8)
let streamReads = stride(from: 0, to: streamBody.count, by: 1_024).map { Array(streamBody[$0..<min($0 + 1_024, streamBody.count)]) }
var splitter = LineSplitter()
// 64 ARI `UD3` lines as a remote Data Adapter writes them (lightstreamer-loadtest's remote
// feed), read in 4 KiB pieces.
let ariLines = (0..<64).map { i in
    "\(1_700_000_000_000 + i)|UD3|S|load\(i % 10)|S|\(i % 10 + 1)|B|0|S|n|S|\(100_000 + i)|S|ts|S|\(1_700_000_000_000 + i)"
}
let ariBody = Array(ariLines.map { $0 + "\r\n" }.joined().utf8)
let ariReads = stride(from: 0, to: ariBody.count, by: 4_096).map { Array(ariBody[$0..<min($0 + 4_096, ariBody.count)]) }
var framer = ARILineFramer()
var documentValues: [String?] = [documents[0][0]]
var spreadValues: [String?] = [spreadDocuments[0][0]]
var textValues: [String?] = [texts[0][0]]

/// Encodes row `i` of `rows` against the row before it; returns the line's length.
func encode(_ rows: [[String?]], _ i: Int, diffs: Set<DiffFormat>) -> Int {
    let prev = rows[(i + rows.count - 1) % rows.count]
    return UpdateNotification(
        subscriptionId: 1, item: 1, values: UpdateCodec.encode(previous: prev, current: rows[i % rows.count], diffs: diffs)
    )
    .encoded().utf8.count
}

/// Applies line 1 + i % 15 of `lines` (each a diff from the line before) to `values`, which
/// restart from `rows`' first row at line 1.
func applyDiffLine(_ lines: [String], _ i: Int, restart rows: [[String?]], to values: inout [String?]) -> Int {
    let k = 1 + i % (lines.count - 1)
    if k == 1 { values = rows[0] }
    guard case .update(let u) = try! TLCPNotification.parse(lines[k]) else { return 0 }
    return try! UpdateCodec.apply(u.values, to: &values, isFirst: false).count
}
let mode = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "apply"
let n = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2])! : 1_000_000
var values = [String?](repeating: nil, count: 10)
var first = true
var sink = 0
let start = ContinuousClock.now
for i in 0..<n {
    switch mode {
    case "parse":
        if case .update(let u) = try! TLCPNotification.parse(lines[i % lines.count]) { sink &+= u.values.count }
    case "apply":
        if case .update(let u) = try! TLCPNotification.parse(lines[i % lines.count]) {
            sink &+= try! UpdateCodec.apply(u.values, to: &values, isFirst: first).count
            first = false
        }
    case "encode": sink &+= encode(rows, i, diffs: [])
    case "apply-json": sink &+= applyDiffLine(documentLines, i, restart: documents, to: &documentValues)
    case "apply-patch": sink &+= applyDiffLine(spreadLines, i, restart: spreadDocuments, to: &spreadValues)
    case "apply-text": sink &+= applyDiffLine(textLines, i, restart: texts, to: &textValues)
    case "parse-wide":
        if case .object(let members)? = try? JSONValue.parse(wideDocuments[i % 16][0] ?? "") { sink &+= members.count }
    case "split-stream":
        // One operation: the whole body (64 lines), read by read, as the HTTP transport feeds it.
        for read in streamReads {
            sink &+= read.withUnsafeBytes { try! splitter.append($0) }.count
        }
    case "split-message":
        // One operation: the same 64 lines as one WebSocket message, as the WS transport splits it.
        sink &+= streamBody.withUnsafeBufferPointer { LineSplitter.lines(ofMessageBytes: $0) }.count
    case "ari-frame":
        // One operation: the 64 lines, read by read, as a remote adapter's connection feeds them.
        for read in ariReads {
            sink &+= read.withUnsafeBytes { framer.append($0) }.count
        }
    case "ari-decode":
        // One line of the same feed decoded (from its bytes), and through its tokens.
        if case .update(let u)? = try? ARIRemoteLine.decode(ariLines[i % 64]) { sink &+= u.fields.count }
    case "ari-decode-tokens":
        if case .update(let u)? = try? ARIRemoteLine.decodeTokens(ariLines[i % 64]) { sink &+= u.fields.count }
    case "encode-wide": sink &+= encode(wideDocuments, i, diffs: [.jsonPatch])
    case "encode-diffs": sink &+= encode(rows, i, diffs: [.tlcpDiff, .jsonPatch])
    case "encode-patch": sink &+= encode(spreadDocuments, i, diffs: [.tlcpDiff, .jsonPatch])
    case "encode-text": sink &+= encode(texts, i, diffs: [.tlcpDiff])
    case "encode-json": sink &+= encode(documents, i, diffs: [.tlcpDiff, .jsonPatch])
    default:
        sink &+=
            (try! TLCPRequestParser.parseWebSocketMessage(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=item1%20item2&LS_schema=stock_name%20last_price%20time&LS_snapshot=true&LS_ack=false"
            )).requests.count
    }
}
let d = ContinuousClock.now - start
print(mode, n, d, "per op ns:", Double(d.components.attoseconds / 1_000_000_000 + d.components.seconds * 1_000_000_000) / Double(n), sink)
