import TLCP
import Testing

@testable import ARI

@Suite struct ARIValueTests {
    func value(_ type: ARIType, _ token: Substring, limits: ARILimits = .default) throws -> ARIValue {
        try ARIValue(type: type, token: token, limits: limits)
    }

    @Test func everyTypeRoundTrips() throws {
        let values: [ARIValue] = [
            .string("a b|c"), .string(nil), .string(""), .boolean(true), .boolean(false), .integer(-42), .integer(Int.max),
            .long(Int64.min), .double(40.5), .double(0), .double(1e20), .double(-.infinity), .modes([.raw, .command]),
            .modes([]), .modes(nil), .platform(.apple), .platform(.google), .platform(nil), .bytes([0, 255, 10]),
            .bytes([]), .bytes(nil), .diffAlgorithms([.jsonPatch, .diffMatchPatch]), .diffAlgorithms([]), .diffAlgorithms(nil),
        ]
        for v in values {
            #expect(try value(v.type, Substring(v.token)) == v, "\(v)")
        }
    }

    @Test func integersSaturateAndRefuseJunk() throws {
        #expect(try value(.integer, "99999999999999999999999") == .integer(Int.max))
        #expect(try value(.integer, "-99999999999999999999999") == .integer(Int.min))
        #expect(try value(.integer, "+7") == .integer(7))
        #expect(try value(.long, "-5") == .long(-5))
        for junk: Substring in ["", "-", "1.5", "0x10", " 1", "1e3", "١"] {
            #expect(throws: ARIProtocolError.self, "\(junk)") { try value(.integer, junk) }
        }
        let long = Substring(String(repeating: "9", count: 41))
        #expect(throws: ARIProtocolError.badValue(type: "I", value: String(long))) { try value(.integer, long) }
    }

    @Test func doublesReadEachLanguagesText() throws {
        #expect(try value(.double, "40.5") == .double(40.5))
        #expect(try value(.double, "1e+20") == .double(1e20))
        #expect(try value(.double, "1.0E20") == .double(1e20))
        #expect(try value(.double, "0") == .double(0))
        #expect(try value(.double, "inf") == .double(.infinity))
        #expect(try value(.double, "Infinity") == .double(.infinity))
        #expect(try value(.double, "-Infinity") == .double(-.infinity))
        guard case .double(let nan) = try value(.double, "NaN") else {
            Issue.record("NaN is a double")
            return
        }
        #expect(nan.isNaN)
        for junk: Substring in ["", "abc", "0x1p3", "1 ", "1,5", "--1"] {
            #expect(throws: ARIProtocolError.self, "\(junk)") { try value(.double, junk) }
        }
        #expect(ARINumbers.format(.infinity) == "Infinity")
        #expect(ARINumbers.format(.nan) == "NaN")
    }

    @Test func booleansAreOneOrZero() throws {
        #expect(try value(.boolean, "1") == .boolean(true))
        #expect(try value(.boolean, "0") == .boolean(false))
        #expect(throws: ARIProtocolError.badValue(type: "B", value: "true")) { try value(.boolean, "true") }
    }

    @Test func modesInAnyOrderWithoutRepeats() throws {
        #expect(try value(.modes, "RMDC") == .modes(.all))
        #expect(try value(.modes, "CR") == .modes([.raw, .command]))
        #expect(try value(.modes, "$") == .modes([]))
        #expect(ARIModes([.command, .merge]).token == "MC")
        #expect(ARIModes.merge.single == .merge)
        #expect(ARIModes([.merge, .raw]).single == nil)
        #expect(ARIModes.all.contains(SubscriptionMode.distinct))
        for junk: Substring in ["RR", "X", "rm", "R$"] {
            #expect(throws: ARIProtocolError.self, "\(junk)") { try value(.modes, junk) }
        }
    }

    @Test func platformsAndDiffLetters() throws {
        #expect(try value(.platform, "A") == .platform(.apple))
        #expect(try value(.platform, "G") == .platform(.google))
        #expect(throws: ARIProtocolError.self) { try value(.platform, "Apple") }
        #expect(try value(.diffAlgorithms, "MJ") == .diffAlgorithms([.diffMatchPatch, .jsonPatch]))
        #expect(throws: ARIProtocolError.self) { try value(.diffAlgorithms, "JX") }
    }

    @Test func byteValuesAndTheirText() throws {
        #expect(try value(.bytes, "AP8=") == .bytes([0x00, 0xFF]))
        #expect(throws: ARIProtocolError.badValue(type: "Y", value: "**")) { try value(.bytes, "**") }
        #expect(ARIFieldValue.bytes([0x41, 0xE9, 0xFF]).text == "Aéÿ")
        #expect(ARIFieldValue.bytes(nil).text == nil)
        #expect(ARIFieldValue.bytes([]).text == "")
        #expect(ARIFieldValue.text("x").text == "x")
    }

    @Test func versionsAndDialects() {
        #expect(ARIVersion("1.9.1") == ARIVersion(1, 9, 1))
        #expect(ARIVersion("1.8.3")?.description == "1.8.3")
        #expect(ARIVersion("1.9") == nil)
        #expect(ARIVersion("1.9.1.0") == nil)
        #expect(ARIVersion("a.b.c") == nil)
        #expect(ARIVersion("1.9.999") == nil)
        #expect(ARIVersion(1, 8, 3) < ARIVersion(1, 9, 0))
        #expect(ARIDialect(ARIVersion(1, 8, 3)) == .v1_8)
        #expect(ARIDialect(ARIVersion(1, 8, 0)) == .v1_8)
        #expect(ARIDialect(ARIVersion(1, 9, 1)) == .v1_9)
        #expect(ARIDialect(ARIVersion(1, 7, 9)) == nil)
        #expect(ARIDialect(ARIVersion(2, 0, 0)) == nil)
        #expect(ARIDialect(ARIVersion(1, 10, 0)) == nil)
    }
}
