import Testing

@testable import TLCP

/// `JSONPatch.Limits`: hostile patches fail before they build a huge or deep document.
@Suite struct JSONPatchLimitsTests {
    /// `n` operations each copying the whole array into itself: 2^n elements if unbounded.
    static func doublingPatch(_ n: Int) -> String {
        // Copy "" into "/-" would copy the document into itself; wrap it in an array first.
        "[" + (0..<n).map { _ in #"{"op":"copy","from":"/0","path":"/0/-"}"# }.joined(separator: ",") + "]"
    }

    @Test func doublingAttackFailsAtTheNodeBound() {
        // The document is [[x…]]: each copy appends the inner array to itself, doubling it.
        let patch = "[" + (0..<40).map { _ in #"{"op":"copy","from":"/0","path":"/0/-"}"# }.joined(separator: ",") + "]"
        #expect(throws: JSONPatch.Error.self) { try JSONPatch.apply(patch: patch, to: "[[1]]") }
    }

    @Test func doublingUpToTheBoundSucceedsAndOnePastFails() throws {
        // [[]] then copies of /0 appended to /0: values = 2 (outer, inner) + 2^k - 1 arrays.
        // Base [[1]]: 3 values. After k copies of the inner array into itself its node count
        // n_k = 2 n_{k-1} (+1 new container each time... measured below instead of guessed).
        let limits = JSONPatch.Limits(maxDepth: 64, maxNodes: 1_000, maxBytes: 1 << 20)
        var k = 0
        var last = "[[1]]"
        // Apply one copy at a time until the bound stops it.
        while true {
            let step = #"[{"op":"copy","from":"/0","path":"/0/-"}]"#
            do {
                last = try JSONPatch.apply(patch: step, to: last, limits: limits)
                k += 1
            } catch {
                break
            }
            #expect(k < 20)
            if k >= 20 { return }
        }
        let size = try JSONValue.parse(last).size
        #expect(size.nodes <= 1_000)
        // The same copy once more would have passed the bound: the inner array doubles.
        let inner = size.nodes - 1
        #expect(1 + 2 * inner > 1_000)
        // And the whole patch in one go fails the same way.
        #expect(throws: JSONPatch.Error.self) {
            try JSONPatch.apply(patch: Self.doublingPatch(k + 1), to: "[[1]]", limits: limits)
        }
        #expect(try JSONPatch.apply(patch: Self.doublingPatch(k), to: "[[1]]", limits: limits) == last)
    }

    @Test func byteBoundCountsTheSerializedText() throws {
        let base = #"{"s":"0123456789"}"# // 18 bytes
        let limits = JSONPatch.Limits(maxDepth: 8, maxNodes: 100, maxBytes: 18 + 17)
        // Adds ,"t":"0123456789" = 17 bytes: exactly at the bound.
        let atBound = try JSONPatch.apply(patch: #"[{"op":"copy","from":"/s","path":"/t"}]"#, to: base, limits: limits)
        #expect(atBound.utf8.count == 35)
        #expect(try JSONValue.parse(atBound).size.bytes == 35)
        // One byte more fails.
        #expect(throws: JSONPatch.Error.self) {
            try JSONPatch.apply(patch: #"[{"op":"copy","from":"/s","path":"/tt"}]"#, to: base, limits: limits)
        }
    }

    @Test func sizeMatchesTheSerialization() throws {
        for text in [#"{"a":[1,2,{"b":"x\"y\n\u0001"}],"c":null,"d":true,"e":false,"f":-1.5e3}"#, "[]", "{}", #""\\""#, "[[[]]]"] {
            let v = try JSONValue.parse(text)
            #expect(v.size.bytes == v.serialized.utf8.count, "\(text)")
        }
        #expect(try JSONValue.parse("[[[]]]").size == JSONPatch.Size(nodes: 3, bytes: 6, depth: 3))
        #expect(try JSONValue.parse("7").size.depth == 0)
    }

    @Test func deepNestingByAddFailsPastTheBoundAndSucceedsAtIt() throws {
        let limits = JSONPatch.Limits(maxDepth: 4, maxNodes: 100, maxBytes: 1_000)
        // {"a":{"b":{}}} is 3 deep; adding [] inside "b" makes it 4: allowed.
        let base = #"{"a":{"b":{}}}"#
        #expect(
            try JSONPatch.apply(patch: #"[{"op":"add","path":"/a/b/c","value":[]}]"#, to: base, limits: limits)
                == #"{"a":{"b":{"c":[]}}}"#)
        // [[]] there makes it 5.
        #expect(throws: JSONPatch.Error.self) {
            try JSONPatch.apply(patch: #"[{"op":"add","path":"/a/b/c","value":[[]]}]"#, to: base, limits: limits)
        }
        // A scalar does not add a level.
        #expect(
            try JSONPatch.apply(patch: #"[{"op":"add","path":"/a/b/c","value":1}]"#, to: base, limits: limits)
                == #"{"a":{"b":{"c":1}}}"#)
    }

    @Test func deepNestingByRepeatedCopiesFails() {
        // Copying the document into a member of itself adds one level per operation.
        let ops = (0..<100).map { _ in #"{"op":"copy","from":"","path":"/a"}"# }.joined(separator: ",")
        #expect(throws: JSONPatch.Error.self) { try JSONPatch.apply(patch: "[\(ops)]", to: #"{"a":1}"#) }
        // 60 copies stay within the default 64 levels.
        let fewer = (0..<60).map { _ in #"{"op":"copy","from":"","path":"/a"}"# }.joined(separator: ",")
        #expect((try? JSONPatch.apply(patch: "[\(fewer)]", to: #"{"a":1}"#)) != nil)
    }

    @Test func aBaseOverTheBoundsCannotBePatched() {
        let limits = JSONPatch.Limits(maxDepth: 2, maxNodes: 100, maxBytes: 1_000)
        #expect(throws: JSONPatch.Error.self) { try JSONPatch.apply(patch: "[]", to: "[[[1]]]", limits: limits) }
        #expect(throws: JSONPatch.Error.self) {
            try JSONPatch.apply(patch: "[]", to: "[1,2,3]", limits: JSONPatch.Limits(maxDepth: 2, maxNodes: 3, maxBytes: 1_000))
        }
    }

    @Test func removingAndReplacingFreeTheBudget() throws {
        let limits = JSONPatch.Limits(maxDepth: 8, maxNodes: 5, maxBytes: 1_000)
        // [1,2,3,4] is 5 values: adding needs a removal first.
        #expect(throws: JSONPatch.Error.self) {
            try JSONPatch.apply(patch: #"[{"op":"add","path":"/-","value":5}]"#, to: "[1,2,3,4]", limits: limits)
        }
        #expect(
            try JSONPatch.apply(
                patch: #"[{"op":"remove","path":"/0"},{"op":"add","path":"/-","value":5}]"#,
                to: "[1,2,3,4]", limits: limits) == "[2,3,4,5]")
        #expect(
            try JSONPatch.apply(
                patch: #"[{"op":"replace","path":"/0","value":[9]},{"op":"replace","path":"/0","value":7}]"#,
                to: "[1,2,3,4]", limits: JSONPatch.Limits(maxDepth: 8, maxNodes: 6, maxBytes: 1_000))
                == "[7,2,3,4]")
        #expect(try JSONPatch.apply(patch: #"[{"op":"move","from":"/0","path":"/-"}]"#, to: "[1,2,3,4]", limits: limits) == "[2,3,4,1]")
    }

    @Test func parsingIsDepthBounded() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(deep) }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse("[[[1]]]", maxDepth: 2) }
        #expect((try? JSONValue.parse("[[1]]", maxDepth: 2)) != nil)
        #expect((try? JSONValue.parse(String(repeating: "[", count: 256) + String(repeating: "]", count: 256))) != nil)
        // A deep patch text fails as a patch error, not a crash.
        #expect(throws: JSONPatch.Error.self) { try JSONPatch.apply(patch: deep, to: "{}") }
        #expect(throws: JSONPatch.Error.self) { try JSONPatch.apply(patch: "[]", to: deep) }
    }

    @Test func aDoublingPatchInAnUpdateIsALineError() {
        var values: [String?] = [#"[[1]]"#]
        let patch = Self.doublingPatch(40)
        #expect(throws: TLCPLineError.self) {
            try UpdateCodec.apply([.jsonPatch(patch)], to: &values, isFirst: false)
        }
        #expect(values == [#"[[1]]"#])
    }

    /// `n` operations testing member `target` of an object of `members` members.
    static func testingPatch(_ n: Int, members: Int, target: Int? = nil) -> (patch: String, document: String) {
        let document = "{" + (0..<members).map { #""m\#($0)":0"# }.joined(separator: ",") + "}"
        let op = #"{"op":"test","path":"/m\#(target ?? members - 1)","value":0}"#
        return ("[" + Array(repeating: op, count: n).joined(separator: ",") + "]", document)
    }

    /// Each operation is charged the document's size: 99 members and the object are 100 values,
    /// so 10 operations fit in 1,000 and the 11th does not.
    @Test func operationsAreChargedTheDocumentsSize() throws {
        let limits = JSONPatch.Limits(maxDepth: 8, maxNodes: 1_000, maxBytes: 1 << 20, maxWork: 1_000)
        let ten = Self.testingPatch(10, members: 99)
        #expect(try JSONPatch.apply(patch: ten.patch, to: ten.document, limits: limits) == ten.document)
        let eleven = Self.testingPatch(11, members: 99)
        #expect(throws: JSONPatch.Error(message: "the patch's operations would walk more than 1000 values")) {
            try JSONPatch.apply(patch: eleven.patch, to: eleven.document, limits: limits)
        }
        // The charge follows the document as it grows.
        let growing = #"[{"op":"add","path":"/a","value":[1,2,3,4,5,6,7,8]},{"op":"test","path":"/a/0","value":1}]"#
        let tight = JSONPatch.Limits(maxDepth: 8, maxNodes: 1_000, maxBytes: 1 << 20, maxWork: 10)
        #expect(throws: JSONPatch.Error.self) { try JSONPatch.apply(patch: growing, to: "{}", limits: tight) }
        #expect(try JSONPatch.apply(patch: growing, to: "{}", limits: .init(maxWork: 11)) == #"{"a":[1,2,3,4,5,6,7,8]}"#)
    }

    /// Operations on an object of 99,999 members: with the default limits the 501st is refused
    /// (the charge is the document's size whatever the operation walks; looking up the last
    /// member costs 0.68 ms in a release build, and a 16 MB line holds some 350,000 of them).
    /// The operations here look up the first member, so that the test itself stays cheap.
    @Test func longPatchesOnLargeObjectsAreRefusedByDefault() throws {
        let (patch, document) = Self.testingPatch(501, members: 99_999, target: 0)
        #expect(throws: JSONPatch.Error(message: "the patch's operations would walk more than 50000000 values")) {
            try JSONPatch.apply(patch: patch, to: document)
        }
        let allowed = Self.testingPatch(500, members: 99_999, target: 0).patch
        #expect(try JSONPatch.apply(patch: allowed, to: document) == document)
    }
}
