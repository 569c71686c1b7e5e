import Testing

@testable import TLCP

/// Decimals (`CONS` bandwidth, `CONF` frequency, and the requests' `LS_requested_max_*`) are
/// written without an exponent, since the protocol's numbers have none: every value written
/// reads back as the same double.
@Suite struct DecimalFormatTests {
    /// Magnitudes Swift writes with an exponent (1e16 and above, below 1e-4), and around them.
    @Test(arguments: [
        1e16, 5e15, 1.5e20, 7.777777777777778e27, 1e40, 1.7976931348623157e308,
        1e-5, 1.5e-7, 1.2345678901234568e-23, 5e-324, 0.0001, 0.5, 40, 40.5, 123456789012345.6,
    ])
    func writtenPlainAndReadBack(value: Double) throws {
        let text = formatDecimal(value)
        #expect(!text.contains("e") && !text.contains("E"), "\(text)")
        #expect(text.utf8.count <= 400)
        #expect(parseDecimal(text) == value, "\(text)")
    }

    /// Digits past the largest double (about 1.8e308) read as infinity, which is refused (the
    /// 400-character bound alone would let 309 nines through).
    @Test func pastTheLargestDoubleIsRefused() {
        #expect(parseDecimal("1" + String(repeating: "0", count: 308)) == 1e308)
        #expect(parseDecimal(String(repeating: "9", count: 309)) == nil)
        #expect(parseDecimal(String(repeating: "9", count: 400)) == nil)
        #expect(RequestedBandwidth(wireValue: String(repeating: "9", count: 400)) == nil)
    }

    @Test func writtenInFull() {
        #expect(formatDecimal(1e16) == "10000000000000000")
        #expect(formatDecimal(7.777777777777778e27) == "7777777777777778000000000000")
        #expect(formatDecimal(1e-5) == "0.00001")
        #expect(formatDecimal(1.5e-7) == "0.00000015")
        #expect(formatDecimal(40) == "40")
        #expect(formatDecimal(40.5) == "40.5")
    }

    /// Random doubles over every exponent a positive finite double has.
    @Test func randomValuesReadBack() {
        var rng = Rand(state: 11)
        for _ in 0..<20_000 {
            let value = Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF)
            let text = formatDecimal(value)
            guard parseDecimal(text) == value, !text.contains("e") else {
                Issue.record("\(value) written as \(text)")
                return
            }
        }
    }

    /// The line the line-parser fuzz target found (a bandwidth of 29 digits): it reads, and
    /// what it encodes to reads back the same.
    @Test func aLongBandwidthRoundTrips() throws {
        let line = "CONS,07777777777777777777777777777"
        let parsed = try TLCPNotification.parse(line)
        let encoded = parsed.encoded()
        #expect(encoded == "CONS,7777777777777778000000000000")
        #expect(try TLCPNotification.parse(encoded) == parsed)
    }
}
