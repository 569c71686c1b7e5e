import TLCP
import Testing

/// `TLCPNotification.parseIfUpdate`, the client's hot path, against the general parser.
@Suite struct UpdateFastPathTests {
    @Test(arguments: ["U,1,2,a|#|$||^3|%7C", "U,12,1,^P[]\r\n", "U,3,4,x\n"])
    func updatesParseAsTheGeneralParserReadsThem(line: String) throws {
        let fast = try #require(try TLCPNotification.parseIfUpdate(line))
        guard case .update(let general) = try TLCPNotification.parse(line) else {
            Issue.record("not an update for the general parser: \(line)")
            return
        }
        #expect(fast == general)
    }

    @Test(arguments: ["PROBE", "CONOK,S1,50000,5000,*", "UNSUB,1", "u,1,1,a", "U", ""])
    func otherLinesAreLeftToTheGeneralParser(line: String) throws {
        #expect(try TLCPNotification.parseIfUpdate(line) == nil)
    }

    @Test(arguments: ["U,,1,a", "U,1,a", "U,x,1,a", "U,1,1"])
    func badUpdateLinesAreErrors(line: String) {
        #expect(throws: TLCPLineError.self) { try TLCPNotification.parseIfUpdate(line) }
        #expect(throws: TLCPLineError.self) { try TLCPNotification.parse(line) }
    }
}
