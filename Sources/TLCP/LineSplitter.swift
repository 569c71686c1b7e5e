/// Splits an incoming byte stream (an HTTP streaming body, or a WS message) into CR-LF
/// terminated lines. Partial lines are kept until their end arrives; a line longer than
/// `maxLineLength` is an error rather than unbounded memory growth.
public struct LineSplitter: Sendable {
    public struct LineTooLong: Error, Sendable, Hashable {
        public var limit: Int
    }

    public let maxLineLength: Int
    private var pending: [UInt8] = []

    public init(maxLineLength: Int = 16 * 1024 * 1024) {
        self.maxLineLength = maxLineLength
    }

    /// Bytes received but not yet ended by a line terminator.
    public var pendingByteCount: Int { pending.count }

    /// Feeds bytes and returns the complete lines they end (without CR-LF; a lone LF also ends a
    /// line). Invalid UTF-8 is repaired with U+FFFD so the line can still be reported.
    public mutating func append(_ bytes: some Sequence<UInt8>) throws(LineTooLong) -> [String] {
        let contiguous: Result<[String], LineTooLong>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(LineTooLong) in try append(UnsafeRawBufferPointer(buffer)) }
        }
        if let contiguous { return try contiguous.get() }
        var lines: [String] = []
        for b in bytes {
            if b == 0x0A {
                lines.append(takePending())
            } else {
                guard pending.count < maxLineLength else {
                    pending.removeAll()
                    throw LineTooLong(limit: maxLineLength)
                }
                pending.append(b)
            }
        }
        return lines
    }

    /// `append` for bytes in memory (an HTTP body's reads): each line is found with one scan
    /// and made straight from the bytes, and only the unfinished end of a read is kept. The
    /// same lines and errors as feeding the bytes one by one: a line is too long when it has
    /// more than `maxLineLength` bytes before its LF (its CR included).
    public mutating func append(_ raw: UnsafeRawBufferPointer) throws(LineTooLong) -> [String] {
        guard let base = raw.baseAddress else { return [] }
        let bytes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
        var lines: [String] = []
        var start = 0
        while start < bytes.count {
            let lf = bytes.firstIndexScanningWords(of: 0x0A, from: start, to: bytes.count)
            let end = lf ?? bytes.count
            guard end - start <= maxLineLength - pending.count else {
                pending.removeAll()
                throw LineTooLong(limit: maxLineLength)
            }
            guard let lf else {
                pending.append(contentsOf: bytes.slice(start, end))
                break
            }
            if pending.isEmpty {
                let contentEnd = end > start && bytes[end - 1] == 0x0D ? end - 1 : end
                lines.append(String(decoding: bytes.slice(start, contentEnd), as: UTF8.self))
            } else {
                pending.append(contentsOf: bytes.slice(start, end))
                lines.append(takePending())
            }
            start = lf + 1
        }
        return lines
    }

    /// The pending bytes as a line (a final CR dropped), leaving none pending.
    private mutating func takePending() -> String {
        if pending.last == 0x0D { pending.removeLast() }
        defer { pending.removeAll(keepingCapacity: true) }
        return String(decoding: pending, as: UTF8.self)
    }

    /// Splits a complete WS message into its lines.
    public static func lines(ofMessage text: String) -> [Substring] {
        TLCPRequestParser.splitLines(Substring(text))
    }

    /// The lines of a complete WS message given as its bytes: the same lines as
    /// `lines(ofMessage: String(decoding: bytes, as: UTF8.self))` (invalid UTF-8 repaired with
    /// U+FFFD), each line made once, straight from its bytes, without making the whole message
    /// a `String` first.
    public static func lines(ofMessageBytes bytes: UnsafeBufferPointer<UInt8>) -> [String] {
        var lines: [String] = []
        var start = 0
        let n = bytes.count
        while true {
            let end = bytes.firstIndexScanningWords(of: UInt8(ascii: "\n"), from: start, to: n) ?? n
            let contentEnd = end > start && bytes[end - 1] == UInt8(ascii: "\r") ? end - 1 : end
            if end == n {
                // An empty last piece (the message ends with its last line's LF) is no line,
                // unless it is the only one.
                if lines.isEmpty || start < contentEnd {
                    lines.append(String(decoding: bytes.slice(start, contentEnd), as: UTF8.self))
                }
                return lines
            }
            lines.append(String(decoding: bytes.slice(start, contentEnd), as: UTF8.self))
            start = end + 1
        }
    }
}
