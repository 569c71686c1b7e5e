import Testing

@testable import TLCP

@Suite struct TLCPDiffTests {
    // The fixtures of docs/protocol/TLCP.md §1.7.
    @Test(arguments: [
        ("foo", "d", "foo"),
        ("foobar", "d", "foo"),
        ("foobar", "bdzap", "fzap"),
        ("foobar", "bdzapcd", "fzapbar"),
        ("foobar", "adzapad", "zapfoo"),
        ("foobar", "aaad", "foo"),
        ("abcdefghijklmnopqrstuvwxyz1", "aaBab", "1"),
    ])
    func officialFixtures(base: String, diff: String, result: String) throws {
        #expect(try TLCPDiff.apply(diff, to: base) == result)
    }

    @Test func malformedDiffsAreErrors() {
        #expect(throws: TLCPDiff.Error.self) { try TLCPDiff.apply("z", to: "foo") } // COPY(25) past the end
        #expect(throws: TLCPDiff.Error.self) { try TLCPDiff.apply("A", to: "foo") } // unterminated count
        #expect(throws: TLCPDiff.Error.self) { try TLCPDiff.apply("ad", to: "foo") } // ADD(3) with nothing after
        #expect(throws: TLCPDiff.Error.self) { try TLCPDiff.apply("a1", to: "foo") } // not a letter
        #expect(throws: TLCPDiff.Error.self) { try TLCPDiff.apply("aaz", to: "foo") } // DEL(25) past the end
    }

    @Test(arguments: [
        ("foobar", "fzapbar"), ("foo", "foo"), ("", "abc"), ("abc", ""), ("hello world", "hello there world"),
        ("12.34", "12.35"), ("àèìòù", "àeìòù"), (String(repeating: "x", count: 100), String(repeating: "x", count: 99) + "y"),
    ])
    func producedDiffsApply(base: String, target: String) throws {
        let diff = try #require(TLCPDiff.make(from: base, to: target))
        #expect(try TLCPDiff.apply(diff, to: base) == target)
    }

    @Test func noDiffWithCharactersOutsideTheBMP() {
        #expect(TLCPDiff.make(from: "a😀", to: "b") == nil)
        #expect(TLCPDiff.make(from: "a", to: "😀") == nil)
    }

    /// The byte path (characters counted on the UTF-8 bytes in place) makes the same diff as
    /// the UTF-16 reference: pairs that share a prefix and a suffix around a changed middle, of
    /// lengths up to past 26² so that counts take up to three letters, in ASCII and in text
    /// whose characters share their first bytes (é/è, €/₤: the common bytes end inside a
    /// character and must be cut back to its start).
    @Test func theBytePathMakesTheSameDiffsAsTheUTF16Path() throws {
        var r = Rand(state: 0x5EED_D1FF)
        let ascii = ["a", "b", "{", "\"", ":", "1", "9", ",", " ", "%", "^", "z", "Z"]
        let mixed = ascii + ["é", "è", "ñ", "€", "₤", "語", "\u{301}"]
        for round in 0..<1_000 {
            let alphabet = round % 2 == 1 ? mixed : ascii
            func text(_ n: Int) -> String { (0..<n).map { _ in r.pick(alphabet) }.joined() }
            let long = round % 10 == 0
            let prefix = text(r.int(0...(long ? 800 : 40)))
            let suffix = text(r.int(0...(long ? 800 : 40)))
            let base = prefix + text(r.int(0...30)) + suffix
            let target = prefix + text(r.int(0...30)) + suffix
            let diff = try #require(TLCPDiff.make(from: base, to: target))
            #expect(diff == ReferenceTLCPDiff.make(from: base, to: target), "\(base) -> \(target)")
            #expect(try TLCPDiff.apply(diff, to: base) == target)
        }
        #expect(TLCPDiff.make(from: "é€x", to: "è€x") == ReferenceTLCPDiff.make(from: "é€x", to: "è€x"))
        #expect(TLCPDiff.make(from: "a€", to: "a₤") == "bb₤b") // COPY(1), ADD(1) "₤", DEL(1)
        #expect(TLCPDiff.make(from: "é😀", to: "è") == nil)
    }

    /// Applying on the bytes of the texts gives what the UTF-16 path gives, result or error,
    /// for diffs that apply and for random ones that mostly do not: ASCII texts, texts with
    /// 2- and 3-byte characters (é and è share their first byte, € and ₤ their first two), and
    /// texts with a character outside the BMP, which take the UTF-16 path.
    @Test(arguments: [
        ["a", "b", "c", "z", "A", "B", "Z", "1", "{", "%"],
        ["a", "b", "z", "A", "Z", "é", "è", "€", "₤", "中", "ß", "%"],
        ["a", "z", "A", "é", "€", "😀"],
    ])
    func theBytePathsApplyAsTheUTF16Path(letters: [String]) throws {
        var r = Rand(state: 0xA991_7D1F)
        for round in 0..<1_500 {
            let base = (0..<r.int(0...60)).map { _ in r.pick(letters) }.joined()
            let diff: String
            let target = String(base.prefix(r.int(0...base.count))) + r.pick(letters) + String(base.suffix(r.int(0...base.count)))
            // The protocol makes no diff outside the BMP: texts with 😀 get random diffs only.
            if round % 2 == 0, let made = ReferenceTLCPDiff.make(from: base, to: target) {
                diff = made
                #expect(try TLCPDiff.apply(diff, to: base) == target)
            } else {
                diff = (0..<r.int(0...12)).map { _ in r.pick(letters) }.joined()
            }
            let bytes = Result { () throws(TLCPDiff.Error) in try TLCPDiff.apply(diff, to: base) }
            let units = Result { () throws(TLCPDiff.Error) in try TLCPDiff.applyUTF16(diff, to: base) }
            #expect(bytes == units, "\(diff) on \(base)")
        }
    }

    @Test func countsAtTheEdgesOfTheirWidth() throws {
        for n in [0, 1, 25, 26, 27, 675, 676, 677, 17_575, 17_576] {
            let base = String(repeating: "a", count: n)
            let diff = try #require(TLCPDiff.make(from: base, to: base + "b"))
            #expect(diff == ReferenceTLCPDiff.make(from: base, to: base + "b"))
            #expect(TLCPDiff.numberWidth(n) == (n < 26 ? 1 : n < 676 ? 2 : n < 17_576 ? 3 : 4))
            #expect(try TLCPDiff.apply(diff, to: base) == base + "b")
        }
    }

    @Test func largeCountsUseCapitalDigits() throws {
        let base = String(repeating: "a", count: 700)
        let diff = try #require(TLCPDiff.make(from: base, to: base + "b"))
        // COPY(700): 700 = 1*676 + 0*26 + 24 → "BAy"
        #expect(diff.hasPrefix("BAy"))
        #expect(try TLCPDiff.apply(diff, to: base) == base + "b")
    }
}

/// TLCP-diff cannot be made to build more than its inputs hold.
@Suite struct TLCPDiffBoundsTests {
    @Test(arguments: [
        "ZZZZZZZZZZZZZZZZZZZZz", // a count far past 2^40
        "BAAAAAAAAa", // 26^9: past the base
        "aZZZZZZZZa", // ADD of a huge count: past the diff
        "aaZZZZZZZZz", // DEL past the base
    ])
    func hugeCountsAreErrors(diff: String) {
        #expect(throws: TLCPDiff.Error.self) { try TLCPDiff.apply(diff, to: "hello") }
    }

    @Test func theResultIsNeverLongerThanBaseAndDiff() throws {
        // Every instruction a zero-length no-op, many times over: still bounded.
        let diff = String(repeating: "aaa", count: 10_000) + "f"
        let out = try TLCPDiff.apply(diff, to: "hello")
        #expect(out == "hello")
        #expect(out.utf16.count <= "hello".utf16.count + diff.utf16.count)
    }
}
