import Testing

@testable import ARI

@Suite struct ARIFramingTests {
    func lines(_ framer: inout ARILineFramer, _ text: String) -> [Result<String, ARIProtocolError>] {
        framer.append(Array(text.utf8))
    }

    @Test func crlfAndLoneLFBothEndLines() throws {
        var f = ARILineFramer()
        let out = lines(&f, "KEEPALIVE\r\n1|RAC|S|SDK|S|x\nparti")
        #expect(out.count == 2)
        #expect(try out[0].get() == "KEEPALIVE")
        #expect(try out[1].get() == "1|RAC|S|SDK|S|x")
        #expect(f.pendingByteCount == 5)
        #expect(try lines(&f, "al\r\n").first?.get() == "partial")
    }

    @Test func aByteOrderMarkOnlyAtTheStreamStartIsDropped() throws {
        var f = ARILineFramer()
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let out = f.append(bom + Array("KEEPALIVE\r\n".utf8) + bom + Array("X\r\n".utf8))
        #expect(try out[0].get() == "KEEPALIVE")
        #expect(try out[1].get() == "\u{FEFF}X")
    }

    @Test func anOverlongLineIsOneErrorAndTheNextLineReadsFine() throws {
        var f = ARILineFramer(limits: ARILimits(maxLineLength: 16))
        let out = lines(&f, String(repeating: "x", count: 100) + "\r\nKEEPALIVE\r\n")
        #expect(out.count == 2)
        #expect(throws: ARIProtocolError.lineTooLong(limit: 16)) { try out[0].get() }
        #expect(try out[1].get() == "KEEPALIVE")
        // Exactly at the limit, with its CR, is fine.
        #expect(try lines(&f, String(repeating: "y", count: 16) + "\r\n").first?.get() == String(repeating: "y", count: 16))
    }

    @Test func memoryStaysBoundedWhileALineNeverEnds() {
        var f = ARILineFramer(limits: ARILimits(maxLineLength: 1024))
        var errors = 0
        for _ in 0..<100 {
            errors += f.append([UInt8](repeating: 0x41, count: 4096)).count
            #expect(f.pendingByteCount <= 1025)
        }
        #expect(errors == 1)
    }

    @Test func invalidUTF8IsAnErrorForThatLineOnly() throws {
        var f = ARILineFramer()
        let out = f.append([0x41, 0xC3, 0x28, 0x0A] + Array("KEEPALIVE\n".utf8))
        #expect(throws: ARIProtocolError.invalidUTF8) { try out[0].get() }
        #expect(try out[1].get() == "KEEPALIVE")
    }

    @Test func framedLinesEndInCRLF() {
        #expect(ARILineFramer.frame("0|CLOSE") == Array("0|CLOSE\r\n".utf8))
    }

    @Test func tokensSplitOnTheByteAndRefuseEmptiesAndExcess() throws {
        #expect(try ARITokenizer.tokens(of: "1|SUB|S|a") == ["1", "SUB", "S", "a"])
        // A combining mark after `|` forms one Character with it, but still splits.
        #expect(try ARITokenizer.tokens(of: "1|SUB|S|\u{301}a").count == 4)
        #expect(throws: ARIProtocolError.emptyToken(index: 2)) { try ARITokenizer.tokens(of: "1|SUB||a") }
        #expect(throws: ARIProtocolError.emptyToken(index: 4)) { try ARITokenizer.tokens(of: "1|SUB|S|a|") }
        #expect(throws: ARIProtocolError.emptyToken(index: 0)) { try ARITokenizer.tokens(of: "") }
        let limits = ARILimits(maxTokens: 8)
        #expect(try ARITokenizer.tokens(of: "1|GIT|S|a|S|b|S|c", limits: limits).count == 8)
        #expect(throws: ARIProtocolError.tooManyTokens(limit: 8)) {
            try ARITokenizer.tokens(of: "1|GIT|S|a|S|b|S|c|S", limits: limits)
        }
        #expect(throws: ARIProtocolError.lineTooLong(limit: 16)) {
            try ARITokenizer.tokens(of: String(repeating: "x", count: 17), limits: ARILimits(maxLineLength: 16))
        }
    }
}
