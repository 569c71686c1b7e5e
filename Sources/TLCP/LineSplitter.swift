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
        var lines: [String] = []
        for b in bytes {
            if b == 0x0A {
                if pending.last == 0x0D { pending.removeLast() }
                lines.append(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
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
            let end = bytes.firstIndex(of: UInt8(ascii: "\n"), from: start, to: n) ?? n
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
