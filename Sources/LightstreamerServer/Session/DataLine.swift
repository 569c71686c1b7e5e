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
            bytes.append(UInt8(ascii: "U"))
            bytes.append(UInt8(ascii: ","))
            bytes.appendDecimal(id)
            bytes.append(UInt8(ascii: ","))
            bytes.appendDecimal(item)
            bytes.append(UInt8(ascii: ","))
            bytes.append(contentsOf: encoded)
        }
    }

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

extension Array where Element == UInt8 {
    /// Appends `value` in decimal.
    mutating func appendDecimal(_ value: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var m = value.magnitude
        if m < 10 {
            append(UInt8(truncatingIfNeeded: m) &+ 0x30)
            return
        }
        let start = count
        while m > 0 {
            append(UInt8(truncatingIfNeeded: m % 10) &+ 0x30)
            m /= 10
        }
        self[start...].reverse()
    }
}
