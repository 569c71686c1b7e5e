import ARI

/// libFuzzer entry point: a remote adapter's byte stream as the server reads it. The bytes are
/// framed into lines (in two reads, and byte by byte: the framer's two paths must agree), and
/// each line is decoded (`ARIRemoteLine.decode`, whose `UD3` lines take the byte path) and
/// decoded again through the tokens (`decodeTokens`): both must give the same line or the
/// same error. Any trap is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzARILine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // Small limits, so that the bounds come up often.
    let limits = ARILimits(maxLineLength: 256, maxTokens: 24)
    var inReads = ARILineFramer(limits: limits)
    var oneByOne = ARILineFramer(limits: limits)
    let cut = size / 3
    var lines: [Result<String, ARIProtocolError>] = []
    for read in [UnsafeBufferPointer(rebasing: bytes[..<cut]), UnsafeBufferPointer(rebasing: bytes[cut...])] {
        let got = inReads.append(UnsafeRawBufferPointer(read))
        let expected = oneByOne.append(read.lazy.map { $0 })
        guard got == expected, inReads.pendingByteCount == oneByOne.pendingByteCount else {
            fatalError("the framer's paths differ on \(Array(bytes)): \(got) against \(expected)")
        }
        lines += got
    }
    for case .success(let line) in lines {
        for limits in [limits, ARILimits.default] {
            let decoded = Result { () throws(ARIProtocolError) in try ARIRemoteLine.decode(line, limits: limits) }
            let reference = Result { () throws(ARIProtocolError) in try ARIRemoteLine.decodeTokens(line, limits: limits) }
            guard decoded == reference else {
                fatalError("decode and decodeTokens differ on \(line.debugDescription): \(decoded) against \(reference)")
            }
        }
    }
    return 0
}
