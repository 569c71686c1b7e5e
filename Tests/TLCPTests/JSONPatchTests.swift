import TLCP
import Testing

@Suite struct JSONPatchTests {
    @Test func appliesEveryOperation() throws {
        let base = #"{"a":1,"b":[1,2,3],"c":{"d":"x"}}"#
        #expect(try JSONPatch.apply(patch: #"[{"op":"replace","path":"/a","value":2}]"#, to: base) == #"{"a":2,"b":[1,2,3],"c":{"d":"x"}}"#)
        #expect(try JSONPatch.apply(patch: #"[{"op":"add","path":"/b/1","value":9}]"#, to: base) == #"{"a":1,"b":[1,9,2,3],"c":{"d":"x"}}"#)
        #expect(try JSONPatch.apply(patch: #"[{"op":"add","path":"/b/-","value":4}]"#, to: base) == #"{"a":1,"b":[1,2,3,4],"c":{"d":"x"}}"#)
        #expect(try JSONPatch.apply(patch: #"[{"op":"remove","path":"/c/d"}]"#, to: base) == #"{"a":1,"b":[1,2,3],"c":{}}"#)
        #expect(
            try JSONPatch.apply(patch: #"[{"op":"move","from":"/a","path":"/c/e"}]"#, to: base) == #"{"b":[1,2,3],"c":{"d":"x","e":1}}"#)
        #expect(
            try JSONPatch.apply(patch: #"[{"op":"copy","from":"/c","path":"/z"}]"#, to: base)
                == #"{"a":1,"b":[1,2,3],"c":{"d":"x"},"z":{"d":"x"}}"#)
        #expect(
            try JSONPatch.apply(patch: #"[{"op":"test","path":"/a","value":1.0},{"op":"add","path":"/n","value":null}]"#, to: base)
                == #"{"a":1,"b":[1,2,3],"c":{"d":"x"},"n":null}"#)
        #expect(try JSONPatch.apply(patch: #"[{"op":"replace","path":"","value":[true]}]"#, to: base) == "[true]")
    }

    @Test func pointerEscapes() throws {
        #expect(
            try JSONPatch.apply(patch: #"[{"op":"replace","path":"/a~1b/c~0d","value":"v"}]"#, to: #"{"a/b":{"c~d":0}}"#)
                == #"{"a/b":{"c~d":"v"}}"#)
    }

    @Test(arguments: [
        #"[{"op":"test","path":"/a","value":2}]"#,
        #"[{"op":"remove","path":"/nope"}]"#,
        #"[{"op":"add","path":"/b/9","value":1}]"#,
        #"[{"op":"add","path":"/b/01","value":1}]"#,
        #"[{"op":"jump","path":"/a"}]"#,
        #"{"op":"add"}"#,
        #"[{"op":"move","from":"/c","path":"/c/d/e"}]"#,
        "not json",
    ])
    func badPatchesAreErrors(patch: String) {
        #expect(throws: JSONPatch.Error.self) { try JSONPatch.apply(patch: patch, to: #"{"a":1,"b":[1],"c":{"d":{}}}"#) }
    }

    @Test func producedPatchesReproduceTheTarget() throws {
        let pairs = [
            (#"{"a":1,"b":2}"#, #"{"a":1,"b":3}"#),
            (#"{"a":1,"b":2}"#, #"{"a":1}"#),
            (#"{"a":1}"#, #"{"a":1,"c":[1,2]}"#),
            (#"[1,2,3]"#, #"[1,5,3]"#),
            (#"[1,2,3]"#, #"[1,2]"#),
            (#"{"x":{"y":{"z":"q"}}}"#, #"{"x":{"y":{"z":"r"}}}"#),
        ]
        for (a, b) in pairs {
            let patch = JSONPatch.make(from: try JSONValue.parse(a), to: try JSONValue.parse(b))
            #expect(try JSONPatch.apply(patch: patch.serialized, to: a) == b, "\(a) -> \(b) via \(patch.serialized)")
        }
    }

    @Test func jsonParserRejectsGarbageAndDeepNesting() {
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "\"\u{01}\"", "nul", "[1] x", "\"\\uD800\""] {
            #expect(throws: JSONValue.ParseError.self, "\(bad)") { try JSONValue.parse(bad) }
        }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(deep) }
    }

    @Test func jsonRoundTripKeepsCompactText() throws {
        for text in [#"{"b":1,"a":[1.50,-2e3,true,false,null],"s":"x\"y\\z\n\u0001é😀"}"#, "[]", "{}", "\"\"", "0"] {
            let v = try JSONValue.parse(text)
            #expect(try JSONValue.parse(v.serialized) == v)
        }
        #expect(try JSONValue.parse(#"{ "a" : [ 1 , 2 ] }"#).serialized == #"{"a":[1,2]}"#)
        #expect(try JSONValue.parse(#""\ud83d\ude00""#) == .string("😀"))
    }

    /// RFC 8259 §7: `"` and `\` escaped, control characters as their two-character escapes or
    /// `\u00xx`, everything else (DEL, non-ASCII) as it is.
    @Test func stringsCarryTheMinimalEscapes() {
        let text = "\"\\/\n\r\t\u{08}\u{0C}\u{01}\u{1F}\u{7F}é😀"
        #expect(JSONValue.string(text).serialized == #""\"\\/\n\r\t\b\f\u0001\u001f"# + "\u{7F}é😀\"")
        #expect(
            JSONValue.object([JSONMember(key: "k\u{0}", value: .array([.null, .bool(true), .number("-1.50e3")]))]).serialized
                == #"{"k\u0000":[null,true,-1.50e3]}"#)
    }
}
