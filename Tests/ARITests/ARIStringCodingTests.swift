import Testing

@testable import ARI

@Suite struct ARIStringCodingTests {
    @Test func nullAndEmptyHaveTheirMarkers() throws {
        #expect(ARIStringCoding.encode(nil) == "#")
        #expect(ARIStringCoding.encode("") == "$")
        #expect(try ARIStringCoding.decode("#") == nil)
        #expect(try ARIStringCoding.decode("$") == "")
    }

    @Test func theMarkersAsTextAreEncoded() throws {
        #expect(ARIStringCoding.encode("#") == "%23")
        #expect(ARIStringCoding.encode("$") == "%24")
        #expect(try ARIStringCoding.decode("%23") == "#")
        #expect(try ARIStringCoding.decode("%24") == "$")
        // Not alone: a literal character inside a longer text.
        #expect(try ARIStringCoding.decode("a#b$") == "a#b$")
    }

    @Test func specialsAreEncodedAndPlusIsNeverWritten() {
        #expect(ARIStringCoding.encode("a b+c|d%e\r\n") == "a%20b%2Bc%7Cd%25e%0D%0A")
        #expect(ARIStringCoding.encode("s3cret&|x") == "s3cret%26%7Cx")
        #expect(ARIStringCoding.encode("remote:color") == "remote%3Acolor")
        #expect(ARIStringCoding.encode("wörld€") == "w%C3%B6rld%E2%82%AC")
        #expect(ARIStringCoding.encode("A-z_0.9~") == "A-z_0.9~")
    }

    @Test func bothInboundSchemesDecode() throws {
        // 1.8 form encoding (Python) and 1.9 smart encoding (Node: raw UTF-8 and spaces).
        #expect(try ARIStringCoding.decode("1.1+x%7Cy%E2%82%AC") == "1.1 x|y€")
        #expect(try ARIStringCoding.decode("1.1 x%7Cy€%2B%25") == "1.1 x|y€+%")
        #expect(try ARIStringCoding.decode("CHAT%7Chello+w%C3%B6rld") == "CHAT|hello wörld")
        #expect(try ARIStringCoding.decode("%c3%a9") == "é")
    }

    @Test func badEscapesAndBadUTF8AreErrors() {
        #expect(throws: ARIProtocolError.badEscape(offset: 1)) { try ARIStringCoding.decode("a%2") }
        #expect(throws: ARIProtocolError.badEscape(offset: 0)) { try ARIStringCoding.decode("%zz") }
        #expect(throws: ARIProtocolError.badEscape(offset: 2)) { try ARIStringCoding.decode("ab%") }
        #expect(throws: ARIProtocolError.invalidUTF8) { try ARIStringCoding.decode("%C3%28") }
        #expect(throws: ARIProtocolError.invalidUTF8) { try ARIStringCoding.decode("%FF") }
    }

    @Test func nonNullRefusesTheNullMarker() throws {
        #expect(try ARIStringCoding.decodeNonNull("x", what: "item") == "x")
        #expect(throws: ARIProtocolError.self) { try ARIStringCoding.decodeNonNull("#", what: "item") }
    }

    @Test func randomTextsRoundTripAndNeverCarrySeparators() throws {
        var rng = SplitMix(seed: 0xA41)
        let alphabet: [Character] = [
            "a", "Z", "0", " ", "+", "|", "%", "#", "$", "\r", "\n", "é", "€", "😀", "~", ":", "&", "\u{301}", "\t", "=",
        ]
        for _ in 0..<2000 {
            let length = Int(rng.next() % 12)
            let text = String((0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
            let token = ARIStringCoding.encode(text)
            #expect(!token.isEmpty)
            #expect(!token.utf8.contains(UInt8(ascii: "|")) && !token.utf8.contains(0x0D) && !token.utf8.contains(0x0A))
            #expect(!token.utf8.contains(UInt8(ascii: "+")))
            #expect(try ARIStringCoding.decode(Substring(token)) == text)
        }
    }
}

@Suite struct ARIBase64Tests {
    @Test func knownValues() {
        #expect(ARIBase64.encode([0x00, 0xFF]) == "AP8=")
        #expect(ARIBase64.encode(Array("Man".utf8)) == "TWFu")
        #expect(ARIBase64.encode(Array("Ma".utf8)) == "TWE=")
        #expect(ARIBase64.encode(Array("M".utf8)) == "TQ==")
        #expect(ARIBase64.decode("AP8=") == [0x00, 0xFF])
        #expect(ARIBase64.decode("AP8") == [0x00, 0xFF])
        #expect(ARIBase64.decode("TQ==") == Array("M".utf8))
        #expect(ARIBase64.decode("") == [])
    }

    @Test func malformedIsNil() {
        #expect(ARIBase64.decode("A") == nil)
        #expect(ARIBase64.decode("AP8*") == nil)
        #expect(ARIBase64.decode("A===") == nil)
        #expect(ARIBase64.decode("AP9=") == nil) // non-zero leftover bits
        #expect(ARIBase64.decode("TQ=") == nil)
    }

    @Test func everyLengthRoundTrips() {
        var rng = SplitMix(seed: 7)
        for n in 0..<64 {
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            #expect(ARIBase64.decode(Substring(ARIBase64.encode(bytes))) == bytes)
        }
    }
}

/// A small deterministic generator for the tests' random inputs.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
