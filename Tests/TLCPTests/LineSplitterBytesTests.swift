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
        var seed: UInt64 = 7
        func next() -> UInt64 {
            seed &+= 0x9E37_79B9_7F4A_7C15
            var z = seed
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let palette: [UInt8] = [0x0A, 0x0D, 0x61, 0x20, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80, 0xFF, 0x80, 0xC0]
        for _ in 0..<5000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(next() % 16) { bytes.append(palette[Int(next() % UInt64(palette.count))]) }
            check(bytes)
        }
    }
}
