import TLCP

/// A data notification's line (without its line end) on its way into the `NotificationLog` and
/// the session's output: either text, or the parts of a `U` line whose values another session
/// already encoded (`SharedUpdateEncoding`). The parts are copied into the log page and the
/// output as bytes, with no `String` made for the line (making one cost about 600 instructions
/// per update with its release, Benchmarks/server-callgrind.sh).
enum DataLine {
    case text(String)
    /// `U,<subscriptionId>,<item>,` followed by `encoded` (valid UTF-8: the encoder's output).
    case update(subscriptionId: Int, item: Int, encoded: [UInt8])

    /// The line's length in bytes.
    var byteCount: Int {
        switch self {
        case .text(let text):
            return text.utf8.count
        case .update(let id, let item, let encoded):
            return 4 + Self.decimalLength(id) + Self.decimalLength(item) + encoded.count
        }
    }

    /// Appends the line's bytes.
    func append(to bytes: inout [UInt8]) {
        switch self {
        case .text(let text):
            bytes.appendUTF8(text)
        case .update(let id, let item, let encoded):
            // The head is made on the stack and appended in one copy (byte by byte, each
            // append checks capacity and uniqueness).
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maxHeadBytes) { head in
                head[0] = UInt8(ascii: "U")
                head[1] = UInt8(ascii: ",")
                var n = writeDecimal(id, into: head, at: 2)
                head[n] = UInt8(ascii: ",")
                n = writeDecimal(item, into: head, at: n + 1)
                head[n] = UInt8(ascii: ",")
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: head[0..<(n + 1)]))
            }
            bytes.append(contentsOf: encoded)
        }
    }

    /// `U,` + two numbers of at most 20 digits and a sign + two commas.
    static let maxHeadBytes = 2 + 21 + 1 + 21 + 1

    /// Characters of `value` in decimal, its sign included.
    static func decimalLength(_ value: Int) -> Int {
        var m = value.magnitude
        var n = value < 0 ? 2 : 1
        while m >= 10 {
            m /= 10
            n += 1
        }
        return n
    }
}
