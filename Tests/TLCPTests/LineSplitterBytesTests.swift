import TLCP
import Testing

/// `LineSplitter.lines(ofMessageBytes:)` against `lines(ofMessage:)` on the decoded message.
@Suite struct MessageBytesSplitTests {
    private func check(_ bytes: [UInt8]) {
        let expected = LineSplitter.lines(ofMessage: String(decoding: bytes, as: UTF8.self)).map(String.init)
        let got = bytes.withUnsafeBufferPointer { LineSplitter.lines(ofMessageBytes: $0) }
        #expect(got == expected, "\(bytes)")
        #expect(got.map { Array($0.utf8) } == expected.map { Array($0.utf8) }, "\(bytes)")
    }

    @Test func examples() {
        for text in [
            "", "\n", "\r\n", "a", "a\r\n", "a\r\nb", "a\r\nb\r\n", "a\n\nb\n", "a\r", "\r", "x\n\r", "\r\n\r\n", "é\r\nU,1,1,a|b\r\n",
        ] {
            check(Array(text.utf8))
        }
    }

    @Test func randomBytesIncludingInvalidUTF8() {
        var rand = Rand(state: 7)
        // 0x0B and 0x8A differ from LF by one bit: the word scan's test flags them falsely
        // above a true LF.
        let palette: [UInt8] = [0x0A, 0x0D, 0x61, 0x20, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80, 0xFF, 0x80, 0xC0, 0x0B, 0x8A]
        for _ in 0..<5000 {
            var bytes: [UInt8] = []
            // Past several words, as lines usually are.
            for _ in 0..<Int(rand.next() % 40) { bytes.append(palette[Int(rand.next() % UInt64(palette.count))]) }
            check(bytes)
        }
    }
}
