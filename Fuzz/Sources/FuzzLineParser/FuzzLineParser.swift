import TLCP

/// libFuzzer entry point: the client-side line parser and everything it feeds (U value
/// decoding with JSON Patch and TLCP-diff application), and the server's TLCP-diff maker on
/// the values decoded. Any trap is a bug, and so is a difference between the line splitter's
/// two paths.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    checkReadsSplitAsSingleBytes(bytes)
    var splitter = LineSplitter(maxLineLength: 4096)
    guard let lines = try? splitter.append(bytes) else { return 0 }
    let all = lines.isEmpty ? [String(decoding: bytes, as: UTF8.self)] : lines
    var values: [String?] = ["{\"a\":[1,2,{\"b\":\"c\"}]}", "foobar", nil, "", "x"]
    var first = true
    for line in all {
        guard let n = try? TLCPNotification.parse(line) else { continue }
        // Whatever parses must encode to a line that parses and encodes the same way (a 2.4
        // MSGDONE without response comes back with an empty one, so compare encodings).
        let encoded = n.encoded()
        guard let again = try? TLCPNotification.parse(encoded), again.encoded() == encoded else {
            fatalError("round trip failed for \(line.debugDescription): \(n)")
        }
        if case .update(let u) = n {
            let before = values
            if (try? UpdateCodec.apply(u.values, to: &values, isFirst: first)) != nil {
                // A TLCP-diff made from each old value to its new one applies back to it.
                for (old, new) in zip(before, values) {
                    guard let old, let new, let diff = TLCPDiff.make(from: old, to: new) else { continue }
                    guard (try? TLCPDiff.apply(diff, to: old)) == new else {
                        fatalError("diff \(diff.debugDescription) from \(old.debugDescription) does not give \(new.debugDescription)")
                    }
                }
            }
            first = false
        }
    }
    return 0
}

/// The input in two reads through the splitter's path for bytes in memory, and byte by byte
/// (a lazy map has no contiguous storage): the same lines, errors and pending bytes.
func checkReadsSplitAsSingleBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
    var inReads = LineSplitter(maxLineLength: 64)
    var oneByOne = LineSplitter(maxLineLength: 64)
    let cut = bytes.count / 3
    for read in [UnsafeBufferPointer(rebasing: bytes[..<cut]), UnsafeBufferPointer(rebasing: bytes[cut...])] {
        let got = Result { () throws(LineSplitter.LineTooLong) in try inReads.append(UnsafeRawBufferPointer(read)) }
        let expected = Result { () throws(LineSplitter.LineTooLong) in try oneByOne.append(read.lazy.map { $0 }) }
        guard got == expected, inReads.pendingByteCount == oneByOne.pendingByteCount else {
            fatalError("the splitter's paths differ on \(Array(bytes)): \(got) against \(expected)")
        }
    }
}
