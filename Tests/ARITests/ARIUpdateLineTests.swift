import Testing

@testable import ARI

/// `UD3` lines read from their bytes (`ARIUpdateLine`) against the general path through tokens
/// (`ARIRemoteLine.decodeTokens`).
@Suite struct ARIUpdateLineTests {
    /// Value tokens: plain, escaped (`%7C` is `|`), `+` for a space, null, empty, non-ASCII,
    /// longer than the 16 bytes scanned one by one (15, 16, 17 and 40 bytes), the malformed (a
    /// bad escape, an escape that makes invalid UTF-8), and base64 for `Y` values: padded,
    /// unpadded, with `+` and `/`, longer than 16 bytes, and not base64 (`AP9=` has leftover
    /// bits; `A` is one character too few).
    static let values = [
        "12.5", "a+b", "%7C%25", "#", "$", "é€", "%24", "x%2", "%FF", "%C3%A9",
        "fifteen-bytes-x", "sixteen-bytes-xx", "seventeen-bytes-x", "a+value+of+forty+bytes%2C+past+the+scan",
        "QUJD", "QQ==", "QUI", "+/8=", "AP9=", "A", "bG9uZ2VyIHRoYW4gc2l4dGVlbiBieXRlcw==",
    ]
    /// Pieces that make a line go wrong in other ways.
    static let noise = ["", "|", "Y", "B", "S", "UD3", "2", "#", "QUJD"]

    /// A `UD3` line of `fields` fields from the palettes.
    static func line(_ rng: inout SplitMix, fields: Int) -> [String] {
        func pick(_ from: [String]) -> String { from[Int(rng.next() % UInt64(from.count))] }
        var tokens = ["1700000000000", "UD3", "S", pick(values), "S", pick(values), "B", pick(["0", "1"])]
        for _ in 0..<fields {
            tokens += ["S", pick(values), pick(["S", "S", "S", "Y"]), pick(values)]
        }
        return tokens
    }

    /// Well-formed lines, and the same lines with one token replaced, dropped or added: when
    /// the byte path reads a line, it reads what the token path reads; the public `decode`
    /// gives the token path's result, errors included, on every line.
    /// (Limits just below a well-formed line's 12, 16 or 20 tokens; lines of 40–100 bytes.)
    @Test(arguments: zip([4, 11, 16, 19, 32_768], [1 << 20, 60, 1 << 20, 45, 1 << 20]))
    func readsWhatTheTokensRead(maxTokens: Int, maxLineLength: Int) {
        var rng = SplitMix(seed: UInt64(maxTokens) &* 7)
        let limits = ARILimits(maxLineLength: maxLineLength, maxTokens: maxTokens)
        var readFromBytes = 0
        for _ in 0..<6_000 {
            var tokens = Self.line(&rng, fields: Int(rng.next() % 4))
            switch rng.next() % 4 {
            case 0: tokens[Int(rng.next() % UInt64(tokens.count))] = Self.noise[Int(rng.next() % UInt64(Self.noise.count))]
            case 1: tokens.remove(at: Int(rng.next() % UInt64(tokens.count)))
            case 2: tokens.insert(Self.noise[Int(rng.next() % UInt64(Self.noise.count))], at: Int(rng.next() % UInt64(tokens.count + 1)))
            default: break
            }
            let line = tokens.joined(separator: "|")
            let reference = Result { () throws(ARIProtocolError) in try ARIRemoteLine.decodeTokens(line, limits: limits) }
            let fromBytes = ARIUpdateLine.decode(line, limits: limits)
            if let fromBytes {
                readFromBytes += 1
                #expect(reference == .success(.update(fromBytes)), "\(line.debugDescription)")
            } else if case .success(.update) = reference {
                Issue.record("not read from its bytes: \(line.debugDescription)")
            }
            let decoded = Result { () throws(ARIProtocolError) in try ARIRemoteLine.decode(line, limits: limits) }
            #expect(decoded == reference, "\(line.debugDescription)")
        }
        // Lines of up to 20 tokens: with the default limits, some hundreds read.
        if maxTokens == 32_768 { #expect(readFromBytes > 300) }
    }

    /// Every well-formed line of `S` values is read from its bytes, the fields in order.
    @Test func wellFormedLinesAreReadFromTheirBytes() throws {
        let line = "17|UD3|S|item%201|S|7|B|1|S|bid|S|12.5|S|name|S|a+b%7Cc|S|none|S|#|S|empty|S|$|S|bid|S|é"
        let update = try #require(ARIUpdateLine.decode(line, limits: .default))
        #expect(update.item == "item 1")
        #expect(update.subscriptionId == "7")
        #expect(update.isSnapshot)
        #expect(update.fields.map(\.name) == ["bid", "name", "none", "empty", "bid"])
        #expect(update.fields.map(\.value) == [.text("12.5"), .text("a b|c"), .text(nil), .text(""), .text("é")])
        #expect(update.fieldMap["bid"] == .some("é"))
        #expect(ARIUpdateLine.decode("17|UD3|S|i|S|7|B|0", limits: .default)?.fields == [])
    }

    /// `Y` values are read from the bytes too: base64, null, empty.
    @Test func bytesValuesAreReadFromTheirBytes() throws {
        let line = "17|UD3|S|i|S|7|B|0|S|f|Y|QUJD|S|g|Y|#|S|h|Y|$|S|k|Y|+/8="
        let update = try #require(ARIUpdateLine.decode(line, limits: .default))
        #expect(update.fields.map(\.value) == [.bytes(Array("ABC".utf8)), .bytes(nil), .bytes([]), .bytes([0xFB, 0xFF])])
        #expect(ARIUpdateLine.decode("17|UD3|S|i|S|7|B|0|S|f|Y|AP9=", limits: .default) == nil)
    }

    /// What the byte path leaves to the token path: other methods, values that are not
    /// base64, nulls where a name is due, limits.
    @Test func leavesTheRestToTheTokens() {
        let limits = ARILimits(maxLineLength: 40, maxTokens: 10)
        for line in [
            "KEEPALIVE", "17|EOS|S|i|S|7", "17|UD3|S|i|S|7|B|0|S|f|Y|QUJ*", "17|UD3|S|#|S|7|B|0",
            "17|UD3|S|i|S|7|B|2", "17|UD3|S|i|S|7|B|0|S|f", "17|UD3|S|i|S|7|B|0|S|f|S|1|S|g|S|2",
            "17|UD3|S|i|S|7|B|0|S|f|S|0123456789012345678901",
        ] {
            #expect(ARIUpdateLine.decode(line, limits: limits) == nil, "\(line)")
        }
    }
}
