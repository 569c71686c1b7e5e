/// One request's parameters, `k1=v1&k2=v2…`, kept in order. Values are stored decoded.
public struct RequestParameters: Sendable, Hashable, CustomStringConvertible {
    public private(set) var pairs: [(name: String, value: String)]

    public init() { pairs = [] }

    public init(_ pairs: [(String, String)]) {
        self.pairs = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// The value of the last occurrence of `name`.
    public subscript(name: String) -> String? {
        for p in pairs.reversed() where p.name == name { return p.value }
        return nil
    }

    public func contains(_ name: String) -> Bool { pairs.contains { $0.name == name } }

    public mutating func append(_ name: String, _ value: String) {
        pairs.append((name: name, value: value))
    }

    public mutating func append(_ name: String, _ value: String?) {
        if let value { pairs.append((name: name, value: value)) }
    }

    /// Sets `name`, replacing an existing value or appending.
    public mutating func set(_ name: String, _ value: String) {
        if let i = pairs.lastIndex(where: { $0.name == name }) {
            pairs[i].value = value
        } else {
            append(name, value)
        }
    }

    public mutating func remove(_ name: String) {
        pairs.removeAll { $0.name == name }
    }

    public var isEmpty: Bool { pairs.isEmpty }

    /// The encoded line `k1=v1&k2=v2` (values percent-encoded, names as they are).
    public var encoded: String {
        var out = ""
        out.reserveCapacity(pairs.count * 24)
        for (i, p) in pairs.enumerated() {
            if i > 0 { out.append("&") }
            out.append(p.name)
            out.append("=")
            out.append(PercentEncoding.encodeRequestValue(p.value))
        }
        return out
    }

    public var description: String {
        pairs.map { $0.name == "LS_password" ? "\($0.name)=***" : "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// Parses one parameter line. An empty line gives no parameters. A pair without `=`, or a
    /// value that does not decode, is a malformed request (67).
    public static func parse(line: Substring, plusAsSpace: Bool = true) throws(TLCPRequestError) -> RequestParameters {
        try line.withUTF8Bytes { parse(bytes: $0, plusAsSpace: plusAsSpace) }.get()
    }

    /// Most parameters one request may carry (its query and body line together): the longest
    /// legitimate request, a create with its combo controls, has a few dozen. Past it the request
    /// is malformed (67).
    public static let maxCount = 256

    static var tooMany: TLCPRequestError {
        TLCPRequestError(code: 67, message: "Too many parameters in one request (at most \(maxCount))")
    }

    // Bytes, not Characters: a separator followed by a combining mark would otherwise hide
    // inside one Character.
    static func parse(bytes: Bytes, plusAsSpace: Bool) -> Result<RequestParameters, TLCPRequestError> {
        var result = RequestParameters()
        result.pairs.reserveCapacity(12)
        var start = 0
        let n = bytes.count
        while start < n {
            let end = bytes.firstIndex(of: UInt8(ascii: "&"), from: start, to: n) ?? n
            defer { start = end + 1 }
            if end == start { continue }
            guard result.pairs.count < maxCount else { return .failure(tooMany) }
            let piece = bytes.slice(start, end)
            guard let eq = piece.firstIndex(of: UInt8(ascii: "="), from: 0, to: piece.count) else {
                return .failure(TLCPRequestError(code: 67, message: "Malformed parameter '\(String(validUTF8: piece).prefix(40))'"))
            }
            guard eq > 0 else {
                return .failure(TLCPRequestError(code: 67, message: "Parameter with an empty name"))
            }
            let rawName = piece.slice(0, eq)
            switch (
                PercentEncoding.decode(rawName, plusAsSpace: false),
                PercentEncoding.decode(piece.slice(eq + 1, piece.count), plusAsSpace: plusAsSpace)
            ) {
            case (.success(let name), .success(let value)):
                result.pairs.append((name: name, value: value))
            case (.failure(let e), _), (_, .failure(let e)):
                return .failure(
                    TLCPRequestError(code: 67, message: "Bad encoding in parameter \(String(validUTF8: rawName).prefix(40)): \(e)"))
            }
        }
        return .success(result)
    }

    public static func == (lhs: RequestParameters, rhs: RequestParameters) -> Bool {
        lhs.pairs.count == rhs.pairs.count && zip(lhs.pairs, rhs.pairs).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for p in pairs {
            hasher.combine(p.name)
            hasher.combine(p.value)
        }
    }
}

/// A request the server cannot accept, with the protocol's code: 65 (bad syntax or values) or
/// 67 (malformed request), and the request id when one could be read (then the answer is
/// `REQERR`, otherwise `ERROR` or `CONERR`).
public struct TLCPRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var requestId: String?

    public init(code: Int, message: String, requestId: String? = nil) {
        self.code = code
        self.message = message
        self.requestId = requestId
    }

    public var description: String { "TLCP request error \(code): \(message)" }
}

/// Typed access to parameters with the protocol's errors.
struct ParameterReader {
    let params: RequestParameters
    let requestId: String?

    func error(_ message: String, code: Int = 65) -> TLCPRequestError {
        TLCPRequestError(code: code, message: message, requestId: requestId)
    }

    func string(_ name: String) -> String? { params[name] }

    func required(_ name: String) throws(TLCPRequestError) -> String {
        guard let v = params[name] else { throw error("Missing parameter \(name)") }
        return v
    }

    func requiredNonEmpty(_ name: String) throws(TLCPRequestError) -> String {
        let v = try required(name)
        guard !v.isEmpty else { throw error("Empty parameter \(name)") }
        return v
    }

    func int(_ name: String, min: Int = Int.min) throws(TLCPRequestError) -> Int? {
        guard let v = params[name] else { return nil }
        guard let n = Int(decimalDigits: v), n >= min else { throw error("Invalid \(name) '\(v.prefix(40))'") }
        return n
    }

    func requiredInt(_ name: String, min: Int = Int.min) throws(TLCPRequestError) -> Int {
        guard let n = try int(name, min: min) else { throw error("Missing parameter \(name)") }
        return n
    }

    func bool(_ name: String) throws(TLCPRequestError) -> Bool? {
        guard let v = params[name] else { return nil }
        switch v {
        case "true": return true
        case "false": return false
        default: throw error("Invalid \(name) '\(v.prefix(40))': expected true or false")
        }
    }

    func parsed<T>(_ name: String, _ make: (String) -> T?) throws(TLCPRequestError) -> T? {
        guard let v = params[name] else { return nil }
        guard let t = make(v) else { throw error("Invalid \(name) '\(v.prefix(40))'") }
        return t
    }

    func requiredParsed<T>(_ name: String, _ make: (String) -> T?) throws(TLCPRequestError) -> T {
        guard let t = try parsed(name, make) else { throw error("Missing parameter \(name)") }
        return t
    }
}
