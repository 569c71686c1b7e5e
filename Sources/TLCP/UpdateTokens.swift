/// The client's hot path for `U` lines: the tokens of a line as byte ranges into the line,
/// without making a `String` per value (the line is valid UTF-8 already, and a token without
/// `%` is a slice of it cut at ASCII separators, so it is valid UTF-8 too). Tokens that need
/// decoding (percent escapes, `^P`, `^T`) are decoded as `FieldDelta.parseValues` decodes them.
/// The same lines are accepted and rejected, with the same messages, as by
/// `TLCPNotification.parseIfUpdate`; `notification(line:)` gives the same value.

/// One token of a `U` line.
public struct UpdateToken: Sendable {
    public enum Kind: UInt8, Sendable {
        /// Empty token, or `^N` (`count` fields; `start` is 1 for `^N`, 0 for an empty token).
        case unchanged
        /// `#`.
        case null
        /// Actual content without escapes: the bytes `start..<end` of the line (empty for `$`).
        case literal
        /// Content that needed decoding: `UpdateLineTokens.decoded[start]`.
        case decoded
    }

    public var kind: Kind
    /// How many fields the token covers (1 except for `^N`).
    public var count: Int
    public var start: Int
    public var end: Int

    @inline(__always)
    init(_ kind: Kind, count: Int = 1, start: Int = 0, end: Int = 0) {
        self.kind = kind
        self.count = count
        self.start = start
        self.end = end
    }
}

/// The tokens of one `U` line; reused from line to line (its arrays keep their capacity).
public struct UpdateLineTokens: Sendable {
    public private(set) var subscriptionId = 0
    public private(set) var item = 0
    public private(set) var tokens: [UpdateToken] = []
    /// Tokens that needed decoding, in order: `.value`, `.jsonPatch` or `.tlcpDiff`.
    public private(set) var decoded: [FieldDelta] = []

    public init() {}

    /// Reads `line` (its UTF-8 bytes, from `U,` on, a trailing CR or LF tolerated) into this
    /// value. Nil when the line is readable, else the same error as `parseIfUpdate` throws.
    /// `tokens` ranges are offsets in `line`.
    public mutating func scan(_ line: UnsafeBufferPointer<UInt8>) -> TLCPLineError? {
        tokens.removeAll(keepingCapacity: true)
        if !decoded.isEmpty { decoded.removeAll(keepingCapacity: true) }
        var n = line.count
        while n > 0, line[n - 1] == 0x0D || line[n - 1] == 0x0A { n -= 1 }
        var i = 2 // after "U,"
        func number() -> Int? {
            var v = 0
            let start = i
            while i < n, line[i] != UInt8(ascii: ",") {
                let b = line[i]
                guard b >= 0x30 && b <= 0x39, i - start < 12 else { return nil }
                v = v * 10 + Int(b - 0x30)
                i += 1
            }
            guard i > start, i < n else { return nil }
            i += 1
            return v
        }
        guard n >= 2, let sub = number(), let item = number() else {
            let text = String(decoding: line.slice(0, max(n, 0)), as: UTF8.self)
            return TLCPLineError("Bad update line '\(text.prefix(40))'")
        }
        subscriptionId = sub
        self.item = item
        if tokens.capacity < 16 { tokens.reserveCapacity(16) }
        var start = i
        var escaped = false
        while true {
            let b = i == n ? UInt8(ascii: "|") : line[i]
            if b == UInt8(ascii: "|") {
                if let error = token(line, start, i, escaped: escaped) { return error }
                if i == n { break }
                i += 1
                start = i
                escaped = false
            } else {
                if b == UInt8(ascii: "%") { escaped = true }
                i += 1
            }
        }
        return nil
    }

    /// One token, `line[start..<end]` (`escaped`: it holds a `%`), as `FieldDelta.parseToken` reads it.
    @inline(__always)
    private mutating func token(_ line: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, escaped: Bool) -> TLCPLineError? {
        guard start < end else {
            tokens.append(UpdateToken(.unchanged))
            return nil
        }
        let first = line[start]
        if end - start == 1 {
            if first == UInt8(ascii: "#") {
                tokens.append(UpdateToken(.null))
                return nil
            }
            if first == UInt8(ascii: "$") {
                tokens.append(UpdateToken(.literal, start: start, end: start))
                return nil
            }
        }
        if first != UInt8(ascii: "^") && !escaped {
            tokens.append(UpdateToken(.literal, start: start, end: end))
            return nil
        }
        switch FieldDelta.parseToken(line.slice(start, end)) {
        case .failure(let error): return error
        case .success(.unchangedRun(let count)): tokens.append(UpdateToken(.unchanged, count: count, start: 1))
        case .success(let delta):
            tokens.append(UpdateToken(.decoded, start: decoded.count))
            decoded.append(delta)
        }
        return nil
    }

    /// The same update as `TLCPNotification.parseIfUpdate` gives for `line` (which must be the
    /// line this value last scanned without error).
    public func notification(line: UnsafeBufferPointer<UInt8>) -> UpdateNotification {
        var values: [FieldDelta] = []
        values.reserveCapacity(tokens.count)
        for t in tokens {
            switch t.kind {
            case .unchanged: values.append(t.start == 0 ? .unchanged : .unchangedRun(t.count))
            case .null: values.append(.null)
            case .literal: values.append(.value(String(validUTF8: line.slice(t.start, t.end))))
            case .decoded: values.append(decoded[t.start])
            }
        }
        return UpdateNotification(subscriptionId: subscriptionId, item: item, values: values)
    }
}
