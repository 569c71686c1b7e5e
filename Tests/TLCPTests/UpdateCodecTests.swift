import Testing

@testable import TLCP

@Suite struct UpdateCodecTests {
    /// Decodes a sequence of U lines for one item, the way a client does.
    func decode(_ lines: [String], fields: Int) throws -> [[String?]] {
        var values = [String?](repeating: nil, count: fields)
        var first = true
        var out: [[String?]] = []
        for line in lines {
            guard case .update(let u) = try TLCPNotification.parse(line) else {
                Issue.record("not an update: \(line)")
                continue
            }
            try UpdateCodec.apply(u.values, to: &values, isFirst: first)
            first = false
            out.append(values)
        }
        return out
    }

    @Test func mergeExampleE2() throws {
        let rows = try decode(["U,1,1,a|b", "U,1,1,A|"], fields: 2)
        #expect(rows == [["a", "b"], ["A", "b"]])
        let item2 = try decode(["U,1,2,c|d", "U,1,2,|D"], fields: 2)
        #expect(item2 == [["c", "d"], ["c", "D"]])
    }

    @Test func nullsAndEmptyStrings() throws {
        let rows = try decode(["U,1,1,#|#|$|z", "U,1,1,|n|#|#"], fields: 4)
        #expect(rows == [[nil, nil, "", "z"], [nil, "n", nil, nil]])
    }

    @Test func unchangedRuns() throws {
        let rows = try decode(["U,1,1,a|b|c|d|e|f|g|h|i|j", "U,1,1,^7|X||Y"], fields: 10)
        #expect(rows[1] == ["a", "b", "c", "d", "e", "f", "g", "X", "i", "Y"])
    }

    @Test func diffTokensApplyToThePreviousValue() throws {
        let rows = try decode(
            ["U,1,1,foobar|{\"a\":1}", "U,1,1,^Tbdzapcd|^P[{\"op\":\"replace\",\"path\":\"/a\",\"value\":2}]"], fields: 2)
        #expect(rows[1] == ["fzapbar", "{\"a\":2}"])
        // Percent-encoded patch: a | inside the JSON is sent as %7C.
        let encoded = try decode(["U,1,1,{\"a\":\"x\"}", "U,1,1,^P[{\"op\":\"replace\",\"path\":\"/a\",\"value\":\"%7C\"}]"], fields: 1)
        #expect(encoded[1] == ["{\"a\":\"|\"}"])
    }

    @Test func changedFlags() throws {
        var values: [String?] = ["a", "b", nil]
        let changed = try UpdateCodec.apply([.unchanged, .value("c"), .null], to: &values, isFirst: false)
        #expect(changed == [false, true, false])
    }

    @Test(arguments: ["U,1,1,a", "U,1,1,a|b|c", "U,1,1,^3", "U,1,1,^0|a"])
    func countMismatchesAreErrors(line: String) throws {
        var values: [String?] = ["x", "y"]
        if case .update(let u) = try? TLCPNotification.parse(line) {
            #expect(throws: TLCPLineError.self) { try UpdateCodec.apply(u.values, to: &values, isFirst: false) }
        } else {
            #expect(throws: TLCPLineError.self) { try TLCPNotification.parse(line) }
        }
        #expect(values == ["x", "y"] || values.count == 2)
    }

    @Test func unchangedInFirstUpdateAndDiffOnNullAreErrors() {
        var values: [String?] = [nil]
        #expect(throws: TLCPLineError.self) { try UpdateCodec.apply([.unchanged], to: &values, isFirst: true) }
        #expect(throws: TLCPLineError.self) { try UpdateCodec.apply([.tlcpDiff("d")], to: &values, isFirst: false) }
        #expect(throws: TLCPLineError.self) { try UpdateCodec.apply([.jsonPatch("[]")], to: &values, isFirst: false) }
        values = ["foo"]
        #expect(throws: TLCPLineError.self) { try UpdateCodec.apply([.tlcpDiff("z")], to: &values, isFirst: false) }
    }

    // MARK: encoder

    @Test func encoderUsesEmptyTokensAndRuns() {
        let prev: [String?] = ["a", "b", "c", "d", "e", "f", "g", "h"]
        let cur: [String?] = ["a", "B", "c", "d", "e", "f", "g", "h"]
        let tokens = UpdateCodec.encode(previous: prev, current: cur)
        #expect(tokens == [.unchanged, .value("B"), .unchangedRun(6)])
        #expect(UpdateNotification(subscriptionId: 1, item: 1, values: tokens).encoded() == "U,1,1,|B|^6")
        // Three unchanged in a row: "||" (2 bytes) is as short as "^3": keep the empty tokens.
        #expect(
            UpdateCodec.encode(previous: ["a", "b", "c", "d"], current: ["a", "b", "c", "D"]) == [
                .unchanged, .unchanged, .unchanged, .value("D"),
            ])
    }

    @Test func encoderFirstUpdateIsLiteral() {
        #expect(UpdateCodec.encode(previous: nil, current: ["a", nil, ""]) == [.value("a"), .null, .value("")])
        #expect(
            UpdateNotification(subscriptionId: 3, item: 2, values: UpdateCodec.encode(previous: nil, current: ["a", nil, "", "#x"]))
                .encoded() == "U,3,2,a|#|$|%23x")
    }

    @Test func encoderPicksDiffsOnlyWhenAllowedAndShorter() {
        let old = "The quick brown fox jumps over the lazy dog"
        let new = "The quick brown cat jumps over the lazy dog"
        #expect(UpdateCodec.encode(previous: [old], current: [new]) == [.value(new)])
        let tokens = UpdateCodec.encode(previous: [old], current: [new], diffs: [.tlcpDiff])
        guard case .tlcpDiff = tokens[0] else {
            Issue.record("expected ^T, got \(tokens)")
            return
        }
        // Short values stay literal even when diffs are allowed.
        #expect(UpdateCodec.encode(previous: ["12.5"], current: ["12.6"], diffs: [.tlcpDiff, .jsonPatch]) == [.value("12.6")])
    }

    @Test func encoderProducesJSONPatchForCompactJSON() throws {
        let old = #"{"name":"ACME","price":12.5,"tags":["a","b"],"nested":{"x":1,"y":2}}"#
        let new = #"{"name":"ACME","price":12.75,"tags":["a","b"],"nested":{"x":1,"y":2}}"#
        let tokens = UpdateCodec.encode(previous: [old], current: [new], diffs: [.jsonPatch])
        guard case .jsonPatch(let p) = tokens[0] else {
            Issue.record("expected ^P, got \(tokens)")
            return
        }
        #expect(try JSONPatch.apply(patch: p, to: old) == new)
        // Not compact: a patch could not reproduce the text exactly, so no ^P.
        let spaced = #"{"name": "ACME", "price": 13, "tags": ["a","b"], "nested": {"x":1,"y":2}}"#
        #expect(UpdateCodec.encode(previous: [old], current: [spaced], diffs: [.jsonPatch]) == [.value(spaced)])
    }

    @Test func encodeThenDecodeReproducesValues() throws {
        let rows: [[String?]] = [
            ["a", "b", nil, "", "x|y", "#", "^T", "%", "long value number one", "{\"k\":[1,2,3]}"],
            ["a", "c", nil, "", "x|y", "#", "^T", "%%", "long value number two", "{\"k\":[1,2,4]}"],
            ["a", "c", "n", nil, "x|y", "$", "^P", "%%", "long value number two", "{\"k\":[1,2,4]}"],
        ]
        var client = [String?](repeating: nil, count: 10)
        var prev: [String?]?
        for row in rows {
            let line = UpdateNotification(
                subscriptionId: 1, item: 1, values: UpdateCodec.encode(previous: prev, current: row, diffs: [.jsonPatch, .tlcpDiff])
            ).encoded()
            guard case .update(let u) = try TLCPNotification.parse(line) else {
                Issue.record("\(line)")
                return
            }
            try UpdateCodec.apply(u.values, to: &client, isFirst: prev == nil)
            #expect(client == row, "\(line)")
            prev = row
        }
    }
}

@Suite struct EncodedLengthTests {
    @Test(arguments: [
        FieldDelta.unchanged, .unchangedRun(12), .null, .value(""), .value("#a|b%"), .value("é"), .jsonPatch("[|]"), .tlcpDiff("a\r\n"),
        .value("^"), .value("$x"), .value("a#$^"), .value("\u{7F}%"), .tlcpDiff("#a"), .jsonPatch("$"),
    ])
    func lengthMatchesTheEncoding(token: FieldDelta) {
        #expect(token.encodedLength == token.encoded.utf8.count)
    }
}
