import TLCP

/// The text form of `S` values and of error messages (docs/ARI.md, "Strings").
///
/// Outbound, one encoding serves every dialect: ASCII letters, digits and `-_.~` go as they
/// are, every other byte of the UTF-8 text as `%XX` (space included, `+` never used). Both the
/// 1.8.x form-URL decoders and the 1.9.x decoders read that back exactly.
///
/// Inbound, `+` is a space (1.8.x senders write spaces that way; 1.9.x senders never write a raw
/// `+`), `%XX` is a byte, and any other byte stands for itself (1.9.x sends raw UTF-8).
///
/// `#` alone is null and `$` alone is the empty string; their encoded forms `%23` and `%24` are
/// the one-character texts.
public enum ARIStringCoding {
    public static let nullToken = "#"
    public static let emptyToken = "$"

    /// The wire token for `value`: never empty, never containing `|`, CR or LF.
    public static func encode(_ value: String?) -> String {
        guard let value else { return nullToken }
        if value.isEmpty { return emptyToken }
        return PercentEncoding.encodeRequestValue(value)
    }

    /// The text a token stands for (nil for `#`).
    public static func decode(_ token: Substring) throws(ARIProtocolError) -> String? {
        if token == "#" { return nil }
        if token == "$" { return "" }
        do {
            return try PercentEncoding.decodeRequestValue(token, plusAsSpace: true)
        } catch {
            switch error {
            case .badEscape(let offset): throw .badEscape(offset: offset)
            case .invalidUTF8: throw .invalidUTF8
            }
        }
    }

    /// Decodes a token that must not be null (an item name, a field name, a session id).
    public static func decodeNonNull(_ token: Substring, what: String) throws(ARIProtocolError) -> String {
        guard let s = try decode(token) else { throw .badValue(type: "S", value: "# for \(what)") }
        return s
    }
}

/// Base64 (standard alphabet) for `Y` values; padding is optional when reading.
public enum ARIBase64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i]
            let b1: UInt8 = i + 1 < bytes.count ? bytes[i + 1] : 0
            let b2: UInt8 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func sextet(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }

    /// The bytes `text` encodes, or nil when it is not base64.
    public static func decode(_ text: Substring) -> [UInt8]? {
        decode(utf8: text.utf8)
    }

    /// `decode(_:)` for text given as its UTF-8 bytes.
    static func decode(utf8 text: some Collection<UInt8>) -> [UInt8]? {
        var chars = Array(text)
        var padding = 0
        while chars.last == UInt8(ascii: "=") && padding < 2 {
            chars.removeLast()
            padding += 1
        }
        if padding > 0 && (chars.count + padding) % 4 != 0 { return nil }
        guard chars.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for c in chars {
            guard let v = sextet(c) else { return nil }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero in a canonical encoding; other encoders never set them.
        guard acc & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
