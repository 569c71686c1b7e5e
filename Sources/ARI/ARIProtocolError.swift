/// Why a line from the other side of an ARI connection could not be read. Every malformed or
/// oversized input ends here; nothing in this module traps on what a peer sends.
public enum ARIProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line is longer than the configured limit (bytes, terminator excluded).
    case lineTooLong(limit: Int)
    /// The line has more `|`-separated tokens than the configured limit.
    case tooManyTokens(limit: Int)
    /// The line's bytes are not valid UTF-8.
    case invalidUTF8
    /// An empty line, or an empty token between two `|` (the SDKs send `$` for an empty value).
    case emptyToken(index: Int)
    /// A request or reply line without its method token.
    case missingMethod
    /// A method this codec does not know.
    case unknownMethod(String)
    /// A method known to the codec but not allowed in this direction or at this place.
    case unexpectedMethod(String)
    /// The arguments ended where `expected` (a type tag, a value, a count) was needed.
    case missingArgument(expected: String)
    /// A type tag other than the one required here.
    case unexpectedType(expected: String, found: String)
    /// Tokens left over after a complete message.
    case trailingArguments(count: Int)
    /// A value that does not read as its type (`I`, `L`, `D`, `B`, `M`, `P`, `F`, `Y`).
    case badValue(type: String, value: String)
    /// A `%` not followed by two hexadecimal digits.
    case badEscape(offset: Int)
    /// A count or index out of its allowed range (negative, or above a limit).
    case outOfRange(what: String, value: Int)
    /// A reply to an init request names a protocol version this server does not speak.
    case unsupportedVersion(String)

    public var description: String {
        switch self {
        case .lineTooLong(let l): return "line longer than \(l) bytes"
        case .tooManyTokens(let l): return "more than \(l) tokens in a line"
        case .invalidUTF8: return "line is not valid UTF-8"
        case .emptyToken(let i): return "empty token at position \(i)"
        case .missingMethod: return "no method"
        case .unknownMethod(let m): return "unknown method \(Self.clip(m))"
        case .unexpectedMethod(let m): return "unexpected method \(Self.clip(m))"
        case .missingArgument(let e): return "missing argument: \(e)"
        case .unexpectedType(let e, let f): return "expected type \(e), found \(Self.clip(f))"
        case .trailingArguments(let n): return "\(n) unexpected trailing tokens"
        case .badValue(let t, let v): return "bad \(t) value \(Self.clip(v))"
        case .badEscape(let o): return "bad percent escape at byte \(o)"
        case .outOfRange(let w, let v): return "\(w) out of range: \(v)"
        case .unsupportedVersion(let v): return "unsupported ARI version \(Self.clip(v))"
        }
    }

    /// Peer text quoted in an error message, cut to a size a log line can take.
    public static func clip(_ s: String) -> String {
        s.utf8.count <= 64 ? s : String(decoding: s.utf8.prefix(64), as: UTF8.self) + "…"
    }
}
