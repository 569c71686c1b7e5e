import TLCP
import Testing

@testable import LightstreamerClient

/// `FieldRow.applying` (the engine's hot path: values kept as bytes) against
/// `UpdateCodec.apply` on `[String?]`: the same values, changed flags and JSON Patches, and the
/// same refusals with the same messages, over sequences of random updates to one item.
@Suite struct FieldRowTests {
    private typealias Rand = SplitMix64

    /// Tokens for a random update of `width` fields (sometimes of the wrong width).
    private static func tokens(_ r: inout Rand, width: Int, previous: [String?]?) -> String {
        let values = ["a", "", "7", "ACME Corp", "é", "e\u{301}", "%7C", "100.25", "{\"a\":1}", "%C3%A9", "x%20y"]
        var out: [String] = []
        var field = 0
        let target = r.int(10) == 0 ? width + r.int(3) - 1 : width
        while field < target {
            switch r.int(9) {
            case 0: out.append("")
            case 1: out.append("#")
            case 2: out.append("$")
            case 3:
                let n = 1 + r.int(3)
                out.append("^\(n)")
                field += n - 1
            case 4:
                if let p = previous, field < p.count, p[field] == "{\"a\":1}" || p[field] == "{\"a\":2}" {
                    out.append("^P[{\"op\":\"replace\",\"path\":\"/a\",\"value\":2}]")
                } else {
                    out.append("^P[{\"op\":\"add\",\"path\":\"/b\",\"value\":1}]")
                }
            case 5: out.append(r.int(2) == 0 ? "^TcAd" : "^Tb")
            default: out.append(values[r.int(values.count)])
            }
            field += 1
        }
        return out.joined(separator: "|")
    }

    @Test func applyingMatchesUpdateCodec() throws {
        var r = Rand(seed: 42)
        for _ in 0..<400 {
            let width = 1 + r.int(6)
            var reference: [String?]? = nil
            var row: FieldRow? = nil
            for _ in 0..<12 {
                var line = "U,1,1," + Self.tokens(&r, width: width, previous: reference)
                guard let u = try? TLCPNotification.parseIfUpdate(line) else { continue }
                var expectedValues = reference ?? Array(repeating: nil, count: width)
                let expected: Result<[Bool], TLCPLineError>
                do {
                    expected = .success(try UpdateCodec.apply(u.values, to: &expectedValues, isFirst: reference == nil))
                } catch {
                    expected = .failure(error)
                }
                var patches: [Int: String] = [:]
                var f = 0
                for d in u.values {
                    if case .jsonPatch(let p) = d { patches[f] = p }
                    f += d.width
                }
                var tokens = UpdateLineTokens()
                let got = line.withUTF8 { bytes -> Result<(FieldRow, [Int: String]), FieldRow.Refusal> in
                    #expect(tokens.scan(bytes) == nil)
                    return FieldRow.applying(tokens, line: bytes, to: row, width: width)
                }
                switch (expected, got) {
                case (.success(let changed), .success(let (newRow, newPatches))):
                    #expect(newRow.values == expectedValues, "\(line)")
                    #expect(newRow.changedFlags == changed, "\(line)")
                    #expect(newPatches == patches, "\(line)")
                    #expect(newRow.count == width)
                    reference = expectedValues
                    row = newRow
                case (.failure(let e), .failure(let refusal)):
                    #expect(e.message == refusal.message, "\(line)")
                    // The subscription fails: start over with a fresh item.
                    reference = nil
                    row = nil
                default:
                    Issue.record("\(line): UpdateCodec \(expected), FieldRow \(got)")
                    reference = nil
                    row = nil
                }
            }
        }
    }

    @Test func rowsFromArraysGiveTheirValuesBack() {
        let values: [String?] = ["a", nil, "", "é", "ACME Corporation Limited", nil]
        let changed = [true, false, true, false, true, true]
        let row = FieldRow.make(values: values, changed: changed)
        #expect(row.values == values)
        #expect(row.changedFlags == changed)
        #expect(row.string(-1) == nil)
        #expect(row.string(6) == nil)
        #expect(!row.isChanged(6))
        let empty = FieldRow.make(values: [], changed: [])
        #expect(empty.values == [])
    }
}

extension SplitMix64 {
    /// A number in `0..<n`.
    fileprivate mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
