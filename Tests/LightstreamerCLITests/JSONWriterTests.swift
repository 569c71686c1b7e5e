import Foundation
import Testing

@testable import LightstreamerClient
@testable import lightstreamer

/// The CLI's streaming JSON writer and update printers, checked against the rules of RFC 8259
/// §7 and against what `JSONSerialization` (which the CLI used before) printed.
@Suite struct JSONWriterTests {
    static func text(_ body: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter()
        body(&w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// The old output: `JSONSerialization` with sorted keys, slashes not escaped.
    static func serialized(_ object: [String: Any?]) -> String {
        var clean: [String: Any] = [:]
        for (k, v) in object { clean[k] = v ?? NSNull() }
        let data = try! JSONSerialization.data(withJSONObject: clean, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    @Test func controlCharactersAreEscaped() {
        for b in UInt8(0)..<0x20 {
            let s = String(decoding: [b], as: UTF8.self)
            let expected: String
            switch b {
            case 0x08: expected = #""\b""#
            case 0x09: expected = #""\t""#
            case 0x0A: expected = #""\n""#
            case 0x0C: expected = #""\f""#
            case 0x0D: expected = #""\r""#
            default: expected = "\"\\u00" + String(format: "%02x", b) + "\""
            }
            #expect(Self.text { $0.string(s) } == expected, "byte \(b)")
        }
        #expect(Self.text { $0.string("a\u{0}b\u{1F}c\u{7F}") } == #""a\u0000b\u001fc"# + "\u{7F}\"")
    }

    @Test func quotesAndBackslashesAreEscapedSlashesAreNot() {
        #expect(Self.text { $0.string(#"say "hi" \ bye / now"#) } == #""say \"hi\" \\ bye / now""#)
        #expect(Self.text { $0.string("\"") } == #""\"""#)
        #expect(Self.text { $0.string("\\") } == #""\\""#)
    }

    @Test func unicodePassesThroughAsUTF8() {
        let s = "é€😀\u{2028}\u{FEFF}漢字 👩‍👩‍👧"
        #expect(Self.text { $0.string(s) } == "\"" + s + "\"")
        var w = JSONWriter()
        w.string(s)
        #expect(w.bytes == Array(("\"" + s + "\"").utf8))
    }

    @Test func emptyStringsNullsAndScalars() {
        #expect(Self.text { $0.string("") } == #""""#)
        #expect(Self.text { $0.string(nil as String?) } == "null")
        #expect(Self.text { $0.value(nil) } == "null")
        #expect(Self.text { $0.value(NSNull()) } == "null")
        #expect(Self.text { $0.value(Optional<String>.none as Any) } == "null")
        #expect(Self.text { $0.value(Optional<String>.some("x") as Any) } == #""x""#)
        #expect(Self.text { $0.value(true) } == "true")
        #expect(Self.text { $0.value(false) } == "false")
        for i in [0, 7, 9, 10, 42, -1, -10, 1234567890, Int.max, Int.min] {
            #expect(Self.text { $0.value(i) } == String(i))
        }
        #expect(Self.text { $0.value(Int64(-5)) } == "-5")
        #expect(Self.text { $0.value(3.0) } == "3")
        #expect(Self.text { $0.value(1.5) } == "1.5")
    }

    /// Events as the printers build them come out as `JSONSerialization` wrote them.
    @Test func objectsMatchJSONSerialization() {
        let objects: [[String: Any?]] = [
            ["event": "status", "status": "CONNECTED:WS-STREAMING"],
            ["event": "server_error", "code": 41, "message": "a \"quoted\"\nline\t/path\\ é 😀 \u{1}"],
            ["event": "property", "name": "realMaxBandwidth", "value": nil],
            ["event": "lost_updates", "sub": "s", "item": nil, "pos": nil, "lost": 3],
            ["event": "message_aborted", "msg": "m", "sent_on_network": true],
            ["capabilities": ["mpn", "second-level", "json-patch"]],
            [
                "Zeta": 1, "alpha": 2, "Beta": 3, "10": 4, "9": 5, "a10": 6, "a9": 7, "_x": 8, "é": 9, "": 10, "A": 11, "a": 12,
                "ä": 13, "x_1": 14, "x-1": 15, "x1": 16, "KEY": 17, "Key": 18, "key": 19, "F1": 20, "f2": 21, "f10": 22,
            ],
            ["nested": ["b": 1, "a": NSNull(), "c": ["x", 2, false]] as [String: Any], "empty": "", "list": [] as [Any]],
        ]
        for o in objects {
            #expect(Self.text { $0.object(o) } == Self.serialized(o))
        }
    }

    /// The update event, by name and by position, against the old dictionary rendering.
    @Test func updatesMatchTheOldRendering() {
        let cases: [(names: [String]?, values: [String?], changed: [Bool])] = [
            (
                ["stock_name", "last_price", "time", "Bid", "ask", "10", "9", "a\"b"],
                ["ACME", "10.5", nil, "", "x\ny", "é😀", "\u{0}", "q"], [true, false, true, true, false, true, false, true]
            ),
            (nil, (1...12).map { $0 % 5 == 0 ? nil : "v\($0)" }, (1...12).map { $0 % 3 != 0 }),
            (["dup", "other", "dup"], ["1", "2", "3"], [true, false, false]),
            (["a", "b"], [], []),
        ]
        for c in cases {
            for (itemName, pos) in [("item1", 1), (nil, 7)] as [(String?, Int)] {
                for snapshot in [true, false] {
                    let u = ItemUpdateValue(
                        itemName: itemName, itemPos: pos, isSnapshot: snapshot, values: c.values,
                        changed: c.changed, fieldNames: c.names)
                    let byName = c.names != nil
                    var printer = UpdateJSON()
                    let line = Self.text { printer.write(&$0, sub: "sub", u, names: byName) }
                    #expect(line == Self.serialized(Self.oldUpdate(sub: "sub", u, names: byName)) + "\n")
                    // Same again with the cached key order.
                    #expect(Self.text { printer.write(&$0, sub: "sub", u, names: byName) } == line)
                }
            }
        }
    }

    /// What `EventJSON.update` built before the streaming writer.
    static func oldUpdate(sub: String, _ u: ItemUpdate, names: Bool) -> [String: Any?] {
        var fields: [String: Any] = [:]
        var changed: [String: Any] = [:]
        if names {
            for (k, v) in u.fields { fields[k] = v ?? NSNull() }
            for (k, v) in u.changedFields { changed[k] = v ?? NSNull() }
        } else {
            for (k, v) in u.fieldsByPositions { fields[String(k)] = v ?? NSNull() }
            for (k, v) in u.changedFieldsByPositions { changed[String(k)] = v ?? NSNull() }
        }
        return [
            "event": "update", "sub": sub, "item": u.itemName, "pos": u.itemPos, "snapshot": u.isSnapshot,
            "fields": fields, "changed": changed,
        ]
    }

    /// Table columns, against the old `String`-based padding.
    @Test func tableColumns() {
        func old(_ s: String) -> String {
            let w = 14
            let t = s.count > w - 1 ? String(s.prefix(w - 2)) + "…" : s
            return t + String(repeating: " ", count: max(1, w - t.count))
        }
        for s in [
            "", "a", "item", "1234567890123", "12345678901234", "a much longer value than that", "∅", "é",
            "ééééééééééééééé", "😀😀", "line\r\nbreak and more text", "a\r\nb", "tab\there",
        ] {
            #expect(Self.text { UpdateTable.pad(&$0, s) } == old(s), "\(s)")
        }
    }
}
