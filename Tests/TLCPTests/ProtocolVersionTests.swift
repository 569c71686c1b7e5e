import TLCP
import Testing

@Suite struct ProtocolVersionTests {
    @Test func parsesNamesAndSubprotocols() {
        #expect(TLCPVersion(protocolName: "TLCP-2.5.0") == .v2_5)
        #expect(TLCPVersion(webSocketSubprotocol: "TLCP-2.1.0.lightstreamer.com") == .v2_1)
        #expect(TLCPVersion(protocolName: "TLCP-2.x.0") == nil)
        #expect(TLCPVersion(protocolName: "HTTP-2.5.0") == nil)
        #expect(TLCPVersion(protocolName: "TLCP-2.5.0.1") == nil)
        #expect(TLCPVersion.v2_5.webSocketSubprotocol == "TLCP-2.5.0.lightstreamer.com")
    }

    @Test func featureGates() {
        #expect(!TLCPVersion.v2_0.supports(.sessionRecovery))
        #expect(TLCPVersion.v2_1.supports(.sessionRecovery))
        #expect(!TLCPVersion.v2_1.supports(.wsok))
        #expect(TLCPVersion.v2_2.supports(.wsok) && TLCPVersion.v2_2.supports(.reduceHead))
        #expect(TLCPVersion.v2_3.supports(.mpnReconf) && !TLCPVersion.v2_3.supports(.diffs))
        #expect(TLCPVersion.v2_4.supports(.diffs) && !TLCPVersion.v2_4.supports(.messageResponse))
        #expect(TLCPVersion(2, 5, 3).supports(.messageResponse))
        #expect(TLCPVersion.v2_5.features.count == TLCPFeature.allCases.count)
        #expect(TLCPVersion.v2_0.features.isEmpty)
    }

    @Test func negotiationPicksTheHighestSupported() {
        #expect(TLCPVersion.negotiate(webSocketSubprotocols: ["TLCP-2.1.0.lightstreamer.com", "TLCP-2.5.0.lightstreamer.com"]) == .v2_5)
        #expect(TLCPVersion.negotiate(webSocketSubprotocols: ["TLCP-2.6.0.lightstreamer.com", " TLCP-2.4.0.lightstreamer.com"]) == .v2_4)
        #expect(TLCPVersion.negotiate(webSocketSubprotocols: ["TLCP-3.0.0.lightstreamer.com", "chat"]) == nil)
        #expect(TLCPVersion(2, 5, 9).isSupported)
        #expect(!TLCPVersion(1, 9, 0).isSupported)
    }

    /// Parts are kept in 32 bits: the largest a name can carry (six digits) survives, and
    /// values out of range are clamped, not wrapped or trapped on.
    @Test func partsKeepSixDigitsAndClampTheRest() {
        let big = TLCPVersion(protocolName: "TLCP-999999.999999.999999")
        #expect(big?.major == 999_999 && big?.minor == 999_999 && big?.patch == 999_999)
        #expect(big?.protocolName == "TLCP-999999.999999.999999")
        let clamped = TLCPVersion(-1, 5, Int.max)
        #expect(clamped.major == 0 && clamped.minor == 5 && clamped.patch == Int(UInt32.max))
        var v = TLCPVersion.v2_4
        v.minor = 5
        #expect(v == .v2_5 && v > .v2_4)
        #expect(TLCPVersion(protocolName: "TLCP-2.5.1").map { $0 > .v2_5 } == true)
    }
}
