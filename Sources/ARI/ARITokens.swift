/// Splitting a line into its `|`-separated tokens, and reading or writing typed arguments.
/// Grammar: `<id>|<METHOD>` then `|<type>|<value>` pairs, or the reply forms of docs/ARI.md.
public enum ARITokenizer {
    /// The tokens of `line` (terminator already removed). Splits on the byte `|`, so a combining
    /// character after a `|` cannot hide it.
    public static func tokens(of line: String, limits: ARILimits = .default) throws(ARIProtocolError) -> [Substring] {
        guard line.utf8.count <= limits.maxLineLength else { throw .lineTooLong(limit: limits.maxLineLength) }
        guard !line.isEmpty else { throw .emptyToken(index: 0) }
        if let tokens = line.utf8.withContiguousStorageIfAvailable({ bytes in tokens(of: line, bytes: bytes, limits: limits) }) {
            return try tokens.get()
        }
        return try splitTokens(of: line, limits: limits)
    }

    /// `tokens(of:limits:)` for a line whose bytes are contiguous (a native string): the
    /// separators found on the bytes, each token made straight from its range of the line
    /// (one reference to the line's storage), without the intermediate array of views `split`
    /// makes. The same tokens and errors: too many tokens is found before an empty one.
    private static func tokens(
        of line: String, bytes: UnsafeBufferPointer<UInt8>, limits: ARILimits
    ) -> Result<[Substring], ARIProtocolError> {
        let utf8 = line.utf8
        var tokens: [Substring] = []
        var firstEmpty: Int?
        var start = 0
        // The line's index at `start`, moved along with it (each step is over one token).
        var lower = utf8.startIndex
        while true {
            // A piece past `maxTokens` is what `split` with `maxSplits: maxTokens` refuses.
            guard tokens.count < limits.maxTokens else { return .failure(.tooManyTokens(limit: limits.maxTokens)) }
            let end = bytes.firstIndexScanningWords(of: UInt8(ascii: "|"), from: start, to: bytes.count)
            let pieceEnd = end ?? bytes.count
            if pieceEnd == start, firstEmpty == nil { firstEmpty = tokens.count }
            let upper = utf8.index(lower, offsetBy: pieceEnd - start)
            tokens.append(Substring(utf8[lower..<upper]))
            guard let end else { break }
            start = end + 1
            lower = utf8.index(after: upper)
        }
        if let firstEmpty { return .failure(.emptyToken(index: firstEmpty)) }
        return .success(tokens)
    }

    /// `tokens(of:limits:)` through the standard library's `split` (a line without contiguous
    /// bytes; and the reference the tests compare the byte path with).
    static func splitTokens(of line: String, limits: ARILimits) throws(ARIProtocolError) -> [Substring] {
        let pieces = line.utf8.split(
            separator: UInt8(ascii: "|"), maxSplits: limits.maxTokens,
            omittingEmptySubsequences: false)
        guard pieces.count <= limits.maxTokens else { throw .tooManyTokens(limit: limits.maxTokens) }
        var tokens: [Substring] = []
        tokens.reserveCapacity(pieces.count)
        for (i, p) in pieces.enumerated() {
            guard !p.isEmpty else { throw .emptyToken(index: i) }
            tokens.append(Substring(p))
        }
        return tokens
    }
}

/// A cursor over the argument tokens of one line.
public struct ARIArgumentReader: Sendable {
    public let tokens: [Substring]
    public private(set) var position: Int
    public let limits: ARILimits

    public init(tokens: [Substring], position: Int = 0, limits: ARILimits = .default) {
        self.tokens = tokens
        self.position = max(0, position)
        self.limits = limits
    }

    public var isAtEnd: Bool { position >= tokens.count }
    public var remaining: Int { max(0, tokens.count - position) }
    public var peek: Substring? { isAtEnd ? nil : tokens[position] }

    /// The next raw token.
    public mutating func token(_ expected: String) throws(ARIProtocolError) -> Substring {
        guard position < tokens.count else { throw .missingArgument(expected: expected) }
        defer { position += 1 }
        return tokens[position]
    }

    /// A type tag, then its value token.
    public mutating func value(_ type: ARIType) throws(ARIProtocolError) -> ARIValue {
        let tag = try token(type.rawValue)
        guard tag.utf8.elementsEqual(type.rawValue.utf8) else {
            throw .unexpectedType(expected: type.rawValue, found: String(tag))
        }
        return try ARIValue(type: type, token: try token("\(type.rawValue) value"), limits: limits)
    }

    /// A value of whichever type its tag names.
    public mutating func anyValue() throws(ARIProtocolError) -> ARIValue {
        let tag = try token("type")
        guard let type = ARIType(rawValue: String(tag)) else { throw .unexpectedType(expected: "a type", found: String(tag)) }
        return try ARIValue(type: type, token: try token("\(type.rawValue) value"), limits: limits)
    }

    public mutating func string() throws(ARIProtocolError) -> String? {
        guard case .string(let s) = try value(.string) else { return nil }
        return s
    }

    /// An `S` value that must not be null.
    public mutating func nonNullString(_ what: String) throws(ARIProtocolError) -> String {
        guard let s = try string() else { throw .badValue(type: "S", value: "# for \(what)") }
        return s
    }

    public mutating func boolean() throws(ARIProtocolError) -> Bool {
        guard case .boolean(let b) = try value(.boolean) else { return false }
        return b
    }

    public mutating func integer() throws(ARIProtocolError) -> Int {
        guard case .integer(let i) = try value(.integer) else { return 0 }
        return i
    }

    /// An `I` count of following elements, within `0...remaining tokens / tokensPerElement`.
    public mutating func count(_ what: String, tokensPerElement: Int) throws(ARIProtocolError) -> Int {
        let n = try integer()
        guard n >= 0, n <= remaining / max(1, tokensPerElement) else { throw .outOfRange(what: what, value: n) }
        return n
    }

    public mutating func long() throws(ARIProtocolError) -> Int64 {
        guard case .long(let l) = try value(.long) else { return 0 }
        return l
    }

    public mutating func double() throws(ARIProtocolError) -> Double {
        guard case .double(let d) = try value(.double) else { return 0 }
        return d
    }

    public mutating func modes() throws(ARIProtocolError) -> ARIModes? {
        guard case .modes(let m) = try value(.modes) else { return nil }
        return m
    }

    /// An `M` value that names exactly one mode (tables).
    public mutating func singleMode() throws(ARIProtocolError) -> ARIModes {
        guard let m = try modes(), m.single != nil else { throw .badValue(type: "M", value: "not a single mode") }
        return m
    }

    /// `S|name|S|value` pairs up to the end of the line (init parameters, headers, context).
    public mutating func pairsToEnd() throws(ARIProtocolError) -> [ARIPair] {
        var pairs: [ARIPair] = []
        while !isAtEnd {
            let name = try nonNullString("pair name")
            pairs.append(ARIPair(name, try string()))
        }
        return pairs
    }

    /// Fails when tokens are left.
    public func finish() throws(ARIProtocolError) {
        if !isAtEnd { throw .trailingArguments(count: remaining) }
    }
}

/// A name and an optional value: init parameters, HTTP headers, client context.
public struct ARIPair: Sendable, Hashable {
    public var name: String
    public var value: String?
    public init(_ name: String, _ value: String?) {
        self.name = name
        self.value = value
    }
}

/// Builds one line: `<id>|<METHOD>` then typed arguments.
public struct ARILineWriter: Sendable {
    private var parts: [String]

    public init(id: String, method: String) {
        parts = [id, method]
    }

    public mutating func append(_ value: ARIValue) {
        parts.append(value.type.rawValue)
        parts.append(value.token)
    }

    public mutating func string(_ s: String?) { append(.string(s)) }
    public mutating func integer(_ i: Int) { append(.integer(i)) }

    public mutating func pairs(_ pairs: [ARIPair]) {
        for p in pairs {
            string(p.name)
            string(p.value)
        }
    }

    /// A token written as it is (reply markers such as `V`, `EC`, error codes).
    public mutating func raw(_ token: String) { parts.append(token) }

    /// The line, without its terminator.
    public var line: String { parts.joined(separator: "|") }
}
