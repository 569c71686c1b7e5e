/// Cuts the byte stream of an ARI connection into lines. A line ends at LF, with or without a
/// CR before it (Node remotes send LF alone); a UTF-8 byte order mark at the very start of the
/// stream is dropped (1.9). A line past `limits.maxLineLength` is reported once as an error and
/// its bytes are dropped up to its end, so memory stays bounded whatever the peer sends.
public struct ARILineFramer: Sendable {
    public let limits: ARILimits
    private var pending: [UInt8] = []
    private var discarding = false
    private var atStreamStart = true

    public init(limits: ARILimits = .default) {
        self.limits = limits
    }

    /// Bytes held for a line not yet ended.
    public var pendingByteCount: Int { pending.count }

    /// Feeds bytes; returns each line they complete, or the error that line is.
    public mutating func append(_ bytes: some Sequence<UInt8>) -> [Result<String, ARIProtocolError>] {
        if let lines = bytes.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) { return lines }
        var lines: [Result<String, ARIProtocolError>] = []
        for b in bytes {
            if b == 0x0A {
                if discarding {
                    discarding = false
                } else {
                    if pending.last == 0x0D { pending.removeLast() }
                    lines.append(pending.withUnsafeBufferPointer { finishLine($0) })
                }
                pending.removeAll(keepingCapacity: pending.count <= 4096)
                continue
            }
            if discarding { continue }
            // The terminator's CR does not count toward the limit.
            guard pending.count < limits.maxLineLength + 1 else {
                pending.removeAll()
                discarding = true
                lines.append(.failure(.lineTooLong(limit: limits.maxLineLength)))
                continue
            }
            pending.append(b)
        }
        return lines
    }

    /// `append` for bytes in memory (a socket read): each line end is found with one scan,
    /// a line within one read is made straight from its bytes, and only a read's unfinished
    /// end is kept. The same lines and errors as feeding the bytes one by one.
    public mutating func append(_ raw: UnsafeRawBufferPointer) -> [Result<String, ARIProtocolError>] {
        guard let base = raw.baseAddress else { return [] }
        let bytes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
        var lines: [Result<String, ARIProtocolError>] = []
        var start = 0
        while start < bytes.count {
            let lf = bytes.firstIndexScanningWords(of: 0x0A, from: start, to: bytes.count)
            let end = lf ?? bytes.count
            if !discarding {
                // Up to the limit and the terminator's CR may be held.
                if end - start > limits.maxLineLength + 1 - pending.count {
                    pending.removeAll()
                    discarding = true
                    lines.append(.failure(.lineTooLong(limit: limits.maxLineLength)))
                } else if lf == nil {
                    pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
                } else if pending.isEmpty {
                    let contentEnd = end > start && bytes[end - 1] == 0x0D ? end - 1 : end
                    lines.append(finishLine(UnsafeBufferPointer(rebasing: bytes[start..<contentEnd])))
                } else {
                    pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
                    if pending.last == 0x0D { pending.removeLast() }
                    lines.append(pending.withUnsafeBufferPointer { finishLine($0) })
                }
            }
            guard let lf else { break }
            discarding = false
            pending.removeAll(keepingCapacity: pending.count <= 4096)
            start = lf + 1
        }
        return lines
    }

    private mutating func finishLine(_ line: UnsafeBufferPointer<UInt8>) -> Result<String, ARIProtocolError> {
        var bytes = line[...]
        if atStreamStart {
            atStreamStart = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        }
        if bytes.count > limits.maxLineLength { return .failure(.lineTooLong(limit: limits.maxLineLength)) }
        guard let line = String(validating: bytes, as: UTF8.self) else { return .failure(.invalidUTF8) }
        return .success(line)
    }

    /// The bytes to write for `line` (CR-LF terminated; every SDK reads that).
    public static func frame(_ line: String) -> [UInt8] {
        var bytes = Array(line.utf8)
        bytes.append(0x0D)
        bytes.append(0x0A)
        return bytes
    }
}
