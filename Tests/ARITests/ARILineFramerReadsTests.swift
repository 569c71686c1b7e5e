import Testing

@testable import ARI

/// `ARILineFramer.append` on bytes in memory (a socket read, line ends found a word at a time)
/// against the same bytes fed one by one.
@Suite struct ARILineFramerReadsTests {
    /// LF, CR, `|`, letters, a byte order mark's bytes, invalid UTF-8, and the bytes one bit
    /// away from LF.
    static let palette: [UInt8] = [0x0A, 0x0A, 0x0D, 0x7C, 0x41, 0x31, 0xEF, 0xBB, 0xBF, 0xC3, 0x28, 0xFF, 0x0B, 0x8A]

    /// Reads through both paths, from framers in the same state: the same lines and errors,
    /// the same bytes held.
    /// (16 is the least limit `ARILimits` takes.)
    @Test(arguments: [16, 20, 64, 1 << 20])
    func readsFrameAsBytesFedOneByOne(maxLineLength: Int) {
        var rng = SplitMix(seed: UInt64(maxLineLength))
        func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        for _ in 0..<400 {
            let limits = ARILimits(maxLineLength: maxLineLength)
            var inMemory = ARILineFramer(limits: limits)
            var oneByOne = ARILineFramer(limits: limits)
            for _ in 0..<(1 + pick(8)) {
                var read = (0..<pick(41)).map { _ in Self.palette[pick(Self.palette.count)] }
                // Now and then a byte order mark where a stream may start.
                if pick(4) == 0 { read.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: 0) }
                let got = read.withUnsafeBytes { inMemory.append($0) }
                // A lazy map has no contiguous storage: `append` takes it byte by byte.
                let expected = oneByOne.append(read.lazy.map { $0 })
                #expect(got == expected, "\(read)")
                #expect(inMemory.pendingByteCount == oneByOne.pendingByteCount, "\(read)")
            }
        }
    }

    /// An overlong line split over reads is one error, and the line after it reads fine.
    @Test func anOverlongLineOverSeveralReadsIsOneError() throws {
        var f = ARILineFramer(limits: ARILimits(maxLineLength: 16))
        var out: [Result<String, ARIProtocolError>] = []
        for read in ["1234567890", "abcdefgh", "ijk", "\r\nKEEP", "ALIVE\r\n"] {
            out += Array(read.utf8).withUnsafeBytes { f.append($0) }
        }
        #expect(out.count == 2)
        #expect(throws: ARIProtocolError.lineTooLong(limit: 16)) { try out[0].get() }
        #expect(try out[1].get() == "KEEPALIVE")
    }
}

/// `ARITokenizer.tokens` on a line's bytes against the standard library's `split`.
@Suite struct ARITokenizerBytesTests {
    /// (4 is the least `ARILimits` takes.)
    @Test(arguments: [4, 5, 7, 32_768])
    func tokensAreSplitsTokens(maxTokens: Int) {
        var rng = SplitMix(seed: UInt64(maxTokens) &+ 3)
        let palette: [String] = ["|", "|", "a", "S", "1", "é", "\u{301}", "€", "%7C", " "]
        let limits = ARILimits(maxTokens: maxTokens)
        for _ in 0..<3_000 {
            let line = (0..<Int(rng.next() % 20)).map { _ in palette[Int(rng.next() % UInt64(palette.count))] }.joined()
            let got = Result { () throws(ARIProtocolError) in try ARITokenizer.tokens(of: line, limits: limits) }
            let expected: Result<[Substring], ARIProtocolError> =
                line.isEmpty
                ? .failure(.emptyToken(index: 0))
                : Result { () throws(ARIProtocolError) in try ARITokenizer.splitTokens(of: line, limits: limits) }
            #expect(got.map { $0.map(String.init) } == expected.map { $0.map(String.init) }, "\(line.debugDescription)")
        }
    }
}
