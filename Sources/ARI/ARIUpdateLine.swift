import TLCP

/// `UD3` lines read straight from their bytes, the one kind of line a remote Data Adapter sends
/// at a high rate (docs/ARI.md, "Methods", `UD3`).
///
/// The general path (`ARIRemoteLine.decode`) cuts the line into an array of `Substring` tokens,
/// each holding a reference to the line, and reads them through typed `ARIValue`s. This one
/// walks the separators once and decodes each value (`S` text, `Y` base64 bytes) from its
/// range of bytes. It takes only lines it can read completely and that the general path reads
/// the same way: anything else (another method, an error of any kind) is nil, and the general
/// path decodes the line and reports its error. Tests compare the two over random lines.
enum ARIUpdateLine {
    static func decode(_ line: String, limits: ARILimits) -> ARIUpdate? {
        line.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count <= limits.maxLineLength else { return nil }
            var cursor = ARITokenCursor(bytes: bytes, maxTokens: limits.maxTokens)
            guard cursor.next() != nil, let method = cursor.next(), cursor.equals(method, "UD3"),
                let item = cursor.nonNullString(), let subscriptionId = cursor.nonNullString(),
                cursor.tag("B"), let flag = cursor.next(), flag.count == 1
            else { return nil }
            let isSnapshot: Bool
            switch bytes[flag.lowerBound] {
            case UInt8(ascii: "1"): isSnapshot = true
            case UInt8(ascii: "0"): isSnapshot = false
            default: return nil
            }
            var update = ARIUpdate(item: item, subscriptionId: subscriptionId, isSnapshot: isSnapshot, fields: [])
            // A field takes 8 bytes at least (`S|n|S|v|`), so this bounds the count without
            // another pass over the line.
            update.fields.reserveCapacity(min(cursor.remainingBytes / 8 + 1, 256))
            while !cursor.isAtEnd {
                guard let name = cursor.nonNullString(), let value = cursor.fieldValue() else { return nil }
                update.fields.append(ARIField(name, value))
            }
            return update
        } ?? nil
    }
}

/// The tokens of one line, taken one at a time as ranges of its bytes. Like the tokenizer, it
/// refuses a line of more than `maxTokens` tokens and an empty token, here by returning nil.
private struct ARITokenCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxTokens: Int
    /// Where the next token starts; past the end once the last one is taken.
    private var position = 0
    private var taken = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxTokens: Int) {
        self.bytes = bytes
        self.maxTokens = maxTokens
    }

    var isAtEnd: Bool { position > bytes.count }

    /// The bytes after the current position.
    var remainingBytes: Int { max(0, bytes.count - position) }

    /// The next token's range, nil at the end, past `maxTokens`, or when the token is empty.
    mutating func next() -> Range<Int>? {
        guard !isAtEnd, taken < maxTokens else { return nil }
        taken += 1
        let end = nextSeparator() ?? bytes.count
        let range = position..<end
        position = end + 1
        return range.isEmpty ? nil : range
    }

    /// The next `|`: byte by byte over the first 16 bytes (most tokens are shorter: type tags,
    /// ids, names, numbers), then a word at a time.
    private func nextSeparator() -> Int? {
        let bar = UInt8(ascii: "|")
        var i = position
        let nearEnd = min(bytes.count, position + 16)
        while i < nearEnd {
            if bytes[i] == bar { return i }
            i += 1
        }
        return bytes.firstIndexScanningWords(of: bar, from: i, to: bytes.count)
    }

    func equals(_ range: Range<Int>, _ text: StaticString) -> Bool {
        guard range.count == text.utf8CodeUnitCount else { return false }
        let expected = text.utf8Start
        for (i, offset) in range.enumerated() where bytes[offset] != expected[i] { return false }
        return true
    }

    /// The next token is exactly the type tag `tag`.
    mutating func tag(_ tag: StaticString) -> Bool {
        guard let range = next() else { return false }
        return equals(range, tag)
    }

    /// A field's value: an `S` or `Y` tag and its value; nil when the line cannot be read here.
    mutating func fieldValue() -> ARIFieldValue? {
        guard let tag = next(), tag.count == 1 else { return nil }
        switch bytes[tag.lowerBound] {
        case UInt8(ascii: "S"): return stringValue().map(ARIFieldValue.text)
        case UInt8(ascii: "Y"): return bytesValue().map(ARIFieldValue.bytes)
        default: return nil
        }
    }

    /// A `Y` value after its tag: `.some(nil)` for `#`, empty for `$`, else the bytes its
    /// base64 gives (read as it is, as the general path does); nil when it is not base64.
    mutating func bytesValue() -> [UInt8]?? {
        guard let range = next() else { return nil }
        switch marker(range) {
        case .null: return .some(nil)
        case .empty: return .some([])
        case nil: break
        }
        guard let decoded = ARIBase64.decode(utf8: UnsafeBufferPointer(rebasing: bytes[range])) else { return nil }
        return .some(decoded)
    }

    /// An `S` tag and its value: `.some(nil)` for `#`, nil when the line cannot be read here.
    mutating func string() -> String?? {
        guard tag("S") else { return nil }
        return stringValue()
    }

    /// An `S` value after its tag (see `string()`).
    mutating func stringValue() -> String?? {
        guard let range = next() else { return nil }
        switch marker(range) {
        case .null: return .some(nil)
        case .empty: return ""
        case nil: break
        }
        guard case .success(let text) = PercentEncoding.decodeRequestValue(validUTF8: UnsafeBufferPointer(rebasing: bytes[range]))
        else { return nil }
        return text
    }

    /// The value tokens that stand for no value (`#`) and an empty one (`$`), whatever the type.
    enum Marker { case null, empty }

    /// The marker `range` is, if it is one.
    func marker(_ range: Range<Int>) -> Marker? {
        guard range.count == 1 else { return nil }
        switch bytes[range.lowerBound] {
        case UInt8(ascii: "#"): return .null
        case UInt8(ascii: "$"): return .empty
        default: return nil
        }
    }

    /// An `S` value that is not `#`.
    mutating func nonNullString() -> String? {
        guard case .some(.some(let text)) = string() else { return nil }
        return text
    }
}
