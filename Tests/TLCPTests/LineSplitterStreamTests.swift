import Testing

@testable import TLCP

/// `LineSplitter.append` on bytes in memory (an HTTP body's reads, line ends found a word at a
/// time) against the same bytes fed one by one.
@Suite struct LineSplitterStreamTests {
    /// LF, CR, letters, multi-byte and invalid UTF-8, and the bytes one bit away from LF.
    static let palette: [UInt8] = [0x0A, 0x0A, 0x0D, 0x61, 0x62, 0x20, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xFF, 0x80, 0x0B, 0x8A, 0x00]

    /// Each read through both paths, from splitters in the same state: the same lines, the
    /// same errors, the same bytes left pending.
    @Test(arguments: [8, 12, 64, 16 * 1024 * 1024])
    func readsSplitAsBytesFedOneByOne(maxLineLength: Int) {
        var rand = Rand(state: UInt64(maxLineLength))
        for _ in 0..<400 {
            var inMemory = LineSplitter(maxLineLength: maxLineLength)
            var oneByOne = LineSplitter(maxLineLength: maxLineLength)
            for _ in 0..<rand.int(1...8) {
                let read = (0..<rand.int(0...40)).map { _ in Self.palette[rand.int(0...(Self.palette.count - 1))] }
                let got = read.withUnsafeBytes { raw in Result { () throws(LineSplitter.LineTooLong) in try inMemory.append(raw) } }
                // A lazy map has no contiguous storage: `append` takes it byte by byte.
                let expected = Result { () throws(LineSplitter.LineTooLong) in try oneByOne.append(read.lazy.map { $0 }) }
                #expect(got == expected, "\(read)")
                #expect(inMemory.pendingByteCount == oneByOne.pendingByteCount, "\(read)")
            }
        }
    }

    /// A line of exactly `maxLineLength` bytes before its LF (a CR included) passes, in one read
    /// or across several; one byte more is refused, and the splitter goes on with the next line.
    @Test func theLimitCountsTheBytesBeforeTheLF() throws {
        var s = LineSplitter(maxLineLength: 10)
        #expect(try s.append(Array("0123456789\n".utf8)) == ["0123456789"])
        #expect(try s.append(Array("01234".utf8)) == [])
        // Ten bytes before the LF, the CR included.
        #expect(try s.append(Array("5678\r\n".utf8)) == ["012345678"])
        var t = LineSplitter(maxLineLength: 10)
        #expect(throws: LineSplitter.LineTooLong.self) { try t.append(Array("0123456789A\n".utf8)) }
        #expect(t.pendingByteCount == 0)
        #expect(try t.append(Array("ok\r\n".utf8)) == ["ok"])
        #expect(try t.append(Array("01234".utf8)) == [])
        #expect(throws: LineSplitter.LineTooLong.self) { try t.append(Array("567890".utf8)) }
        #expect(try t.append(Array("next\n".utf8)) == ["next"])
    }

    /// The word scan finds the first match, whatever the alignment, length and bytes around.
    @Test func theWordScanFindsTheFirstMatch() {
        var rand = Rand(state: 11)
        for _ in 0..<5000 {
            let bytes = (0..<rand.int(0...48)).map { _ in Self.palette[rand.int(0...(Self.palette.count - 1))] }
            let from = rand.int(0...bytes.count)
            let to = rand.int(from...bytes.count)
            bytes.withUnsafeBufferPointer { b in
                for target: UInt8 in [0x0A, 0x0D, 0x00] {
                    #expect(b.firstIndexScanningWords(of: target, from: from, to: to) == b.firstIndex(of: target, from: from, to: to))
                }
            }
        }
    }
}
