/// Percent-encoding rules of docs/protocol/TLCP.md §1.4 and §1.6.
public enum PercentEncoding {
    /// Why a percent-encoded text could not be decoded.
    public enum DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
        /// `%` not followed by two hex digits; the offset is in UTF-8 bytes.
        case badEscape(offset: Int)
        /// The decoded bytes are not valid UTF-8.
        case invalidUTF8

        public var description: String {
            switch self {
            case .badEscape(let o): return "bad percent escape at byte \(o)"
            case .invalidUTF8: return "decoded bytes are not valid UTF-8"
            }
        }
    }

    // MARK: Requests (client to server)

    /// Encodes a request parameter value: every byte except ASCII letters, digits and `-_.~`
    /// becomes `%XX` (so space is `%20`, never `+`), as official clients do.
    public static func encodeRequestValue(_ value: String) -> String {
        encode(value) { b in
            !(isAlnum(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") || b == UInt8(ascii: "~"))
        }
    }

    /// Decodes a request parameter value: `%XX` sequences (UTF-8), and, when `plusAsSpace`
    /// is true, a raw `+` as a space (form encoders write space that way).
    public static func decodeRequestValue(_ value: Substring, plusAsSpace: Bool = true) throws(DecodeError) -> String {
        try decode(value.utf8, plusAsSpace: plusAsSpace)
    }

    /// `decodeRequestValue` over bytes already known to be valid UTF-8 (a range of a Swift
    /// string's bytes that does not cut a character: one between ASCII separators).
    public static func decodeRequestValue(
        validUTF8 bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool = true
    ) -> Result<String, DecodeError> {
        decode(bytes, plusAsSpace: plusAsSpace)
    }

    // MARK: Responses (server to client)

    /// Encodes one argument of a notification line (not the field values of `U`): comma, CR,
    /// LF, `%` and other control characters become `%XX`. `+` stays literal.
    public static func encodeResponseArgument(_ value: String) -> String {
        encode(value) { b in
            b == UInt8(ascii: ",") || b == UInt8(ascii: "%") || b < 0x20 || b == 0x7F
        }
    }

    /// Decodes a notification argument (`+` is a literal plus).
    public static func decodeResponseArgument(_ value: Substring) throws(DecodeError) -> String {
        try decode(value.utf8, plusAsSpace: false)
    }

    // MARK: Field values of U

    /// Encodes actual content of a `U` field: `|`, CR, LF, `%` anywhere (plus other control
    /// characters), and `#`, `$`, `^` only in first position.
    public static func encodeFieldValue(_ value: String) -> String {
        let utf8 = value.utf8
        if let first = utf8.first, first == UInt8(ascii: "#") || first == UInt8(ascii: "$") || first == UInt8(ascii: "^") {
            return "%" + hex(first) + encode(String(Substring(utf8.dropFirst())), isFieldSpecial)
        }
        return encode(value, isFieldSpecial)
    }

    static func isFieldSpecial(_ b: UInt8) -> Bool {
        b == UInt8(ascii: "|") || b == UInt8(ascii: "%") || b < 0x20 || b == 0x7F
    }

    // MARK: Shared machinery

    @inline(__always)
    static func isAlnum(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 { hexDigits[Int(nibble & 0xF)] }

    static func hex(_ b: UInt8) -> String {
        String(decoding: [hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xF)]], as: UTF8.self)
    }

    static func encode(_ value: String, _ needsEscape: (UInt8) -> Bool) -> String {
        let utf8 = value.utf8
        guard utf8.contains(where: needsEscape) else { return value }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 16)
        for b in utf8 {
            if needsEscape(b) {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(b >> 4)])
                out.append(hexDigits[Int(b & 0xF)])
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always)
    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }

    static func decode(_ utf8: Substring.UTF8View, plusAsSpace: Bool) throws(DecodeError) -> String {
        try Substring(utf8).withUTF8Bytes { decode($0, plusAsSpace: plusAsSpace) }.get()
    }

    /// Decodes `%XX` sequences (and `+` when asked) in bytes that are valid UTF-8 already; the
    /// result is validated again since escapes may produce anything.
    static func decode(_ bytes: Bytes, plusAsSpace: Bool) -> Result<String, DecodeError> {
        let plus = UInt8(ascii: "+")
        let percent = UInt8(ascii: "%")
        var needsWork = false
        for b in bytes where b == percent || (plusAsSpace && b == plus) {
            needsWork = true
            break
        }
        if !needsWork { return .success(String(validUTF8: bytes)) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b == percent {
                guard i + 2 < n, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) else {
                    return .failure(.badEscape(offset: i))
                }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(plusAsSpace && b == plus ? UInt8(ascii: " ") : b)
                i += 1
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { return .failure(.invalidUTF8) }
        return .success(s)
    }
}
