/// Compact JSON text built under a byte budget: every append is counted, and the first one
/// that would pass `limit` stops the writer for good. Rendering a notification format writes
/// through one, so a format with thousands of placeholders fed a large field is refused after at
/// most `limit` bytes of work instead of building the whole text first.
struct BoundedJSONWriter {
    let limit: Int
    private(set) var text = ""
    /// UTF-8 bytes in `text`.
    private(set) var count = 0
    /// Set by the first append that did not fit; everything after it is ignored.
    private(set) var overflowed = false

    init(limit: Int) { self.limit = max(0, limit) }

    /// Appends JSON syntax or an already-serialized value.
    mutating func raw(_ s: some StringProtocol) {
        guard !overflowed else { return }
        let n = s.utf8.count
        guard n <= limit - count else {
            overflowed = true
            return
        }
        text += s
        count += n
    }

    /// Appends `s` as the content of a JSON string (without the quotes), with the minimal
    /// escapes; stops as soon as the budget is used up.
    mutating func escaped(_ s: some StringProtocol) {
        for scalar in s.unicodeScalars {
            guard !overflowed else { return }
            switch scalar {
            case "\"": raw("\\\"")
            case "\\": raw("\\\\")
            case "\n": raw("\\n")
            case "\r": raw("\\r")
            case "\t": raw("\\t")
            case "\u{08}": raw("\\b")
            case "\u{0C}": raw("\\f")
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    raw("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                } else {
                    let n = UTF8.width(scalar)
                    guard n <= limit - count else {
                        overflowed = true
                        return
                    }
                    text.unicodeScalars.append(scalar)
                    count += n
                }
            }
        }
    }
}
