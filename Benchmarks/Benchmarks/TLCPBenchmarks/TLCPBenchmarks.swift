import Benchmark
import TLCP

/// Ten-field MERGE rows like a stock quote, with a mix of changed and unchanged fields, as a
/// server sends them after the first update.
enum Fixture {
    static let fields = 10
    static let rows: [[String?]] = (0..<64).map { i in
        let price = 100 + Double(i % 17) / 4
        return [
            "ACME Corp", String(price), "12:00:\(10 + i % 50)", String(Double(i % 9) / 10), String(1000 + i % 3 * 500),
            String(price - 0.05), String(price + 0.05), i % 4 == 0 ? "2500" : "3000", "99.5", "103.25",
        ]
    }
    /// The U lines a client receives for those rows (tokens against the previous row).
    static let lines: [String] = {
        var previous: [String?]? = nil
        return rows.map { row in
            defer { previous = row }
            return UpdateNotification(subscriptionId: 1, item: 1, values: UpdateCodec.encode(previous: previous, current: row)).encoded()
        }
    }()
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal, .instructions],
        scalingFactor: .kilo, maxDuration: .seconds(3))

    // Parse one U line into tokens and apply them to the item's values (what a client does).
    Benchmark("Parse+apply U line (10 fields, MERGE)") { benchmark in
        var values = [String?](repeating: nil, count: Fixture.fields)
        var first = true
        let lines = Fixture.lines
        for i in benchmark.scaledIterations {
            let line = lines[i % lines.count]
            guard case .update(let u) = try TLCPNotification.parse(line) else { fatalError("fixture is not U") }
            blackHole(try UpdateCodec.apply(u.values, to: &values, isFirst: first))
            first = false
        }
    }

    // Parse only.
    Benchmark("Parse U line (10 fields, MERGE)") { benchmark in
        let lines = Fixture.lines
        for i in benchmark.scaledIterations {
            blackHole(try TLCPNotification.parse(lines[i % lines.count]))
        }
    }

    // Choose tokens for a new row against the previous one and write the line (server side).
    Benchmark("Encode U line (10 fields, MERGE, no diffs)") { benchmark in
        let rows = Fixture.rows
        for i in benchmark.scaledIterations {
            let prev = rows[(i + rows.count - 1) % rows.count]
            blackHole(
                UpdateNotification(subscriptionId: 1, item: 1, values: UpdateCodec.encode(previous: prev, current: rows[i % rows.count]))
                    .encoded())
        }
    }

    Benchmark("Encode U line (10 fields, MERGE, ^T/^P allowed)") { benchmark in
        let rows = Fixture.rows
        for i in benchmark.scaledIterations {
            let prev = rows[(i + rows.count - 1) % rows.count]
            blackHole(
                UpdateNotification(
                    subscriptionId: 1, item: 1,
                    values: UpdateCodec.encode(previous: prev, current: rows[i % rows.count], diffs: [.tlcpDiff, .jsonPatch])
                ).encoded())
        }
    }

    // A long JSON field where one number changes: ^P/^T are computed and win.
    Benchmark("Encode U line (1 long JSON field, ^T/^P allowed)") { benchmark in
        let docs: [[String?]] = (0..<16).map { i in
            [
                #"{"symbol":"ACME","bid":\#(100 + i),"ask":\#(101 + i),"venue":"XNAS","book":[{"p":100,"q":5},{"p":99,"q":7}],"ts":1700000000}"#
            ]
        }
        for i in benchmark.scaledIterations {
            let prev = docs[(i + docs.count - 1) % docs.count]
            blackHole(
                UpdateNotification(
                    subscriptionId: 1, item: 1,
                    values: UpdateCodec.encode(previous: prev, current: docs[i % docs.count], diffs: [.tlcpDiff, .jsonPatch])
                ).encoded())
        }
    }

    Benchmark("Parse control add request (WS)") { benchmark in
        let message =
            "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=item1%20item2&LS_schema=stock_name%20last_price%20time&LS_snapshot=true&LS_ack=false"
        for _ in benchmark.scaledIterations {
            blackHole(try TLCPRequestParser.parseWebSocketMessage(message))
        }
    }
}
