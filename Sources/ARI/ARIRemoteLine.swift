/// Every line a remote adapter may send, as the proxy reads it (docs/ARI.md, "Lines" and "Methods").
public enum ARIRemoteLine: Sendable, Hashable {
    /// `KEEPALIVE`.
    case keepalive
    /// `1|RAC|…`: credentials and capabilities, the remote's first line.
    case remoteCredentials(ARIRemoteCredentials)
    /// A reply to one of the proxy's requests.
    case reply(ARIReply)
    /// `UD3`.
    case update(ARIUpdate)
    /// `EOS`.
    case endOfSnapshot(item: String, subscriptionId: String)
    /// `CLS`.
    case clearSnapshot(item: String, subscriptionId: String)
    /// `FAL`: the adapter failed, or the remote met a protocol error.
    case failure(message: String?)
    /// `DFD` (1.9): the diff algorithms to try, per field; nil is none.
    case diffOrders(item: String, subscriptionId: String, fields: [ARIDiffOrder])

    /// Reads one line (terminator removed). Never traps; anything malformed is thrown.
    public static func decode(_ line: String, limits: ARILimits = .default) throws(ARIProtocolError) -> ARIRemoteLine {
        // (The length first: comparing every line with the text costs more than the rest of
        // the check.)
        if line.utf8.count == 9, line == ARIMethod.keepalive.rawValue { return .keepalive }
        // The data path: a well-formed `UD3` read from its bytes; anything else reads below.
        if let update = ARIUpdateLine.decode(line, limits: limits) { return .update(update) }
        return try decodeTokens(line, limits: limits)
    }

    /// `decode` through the line's tokens: every kind of line, and every error (and the
    /// reference the tests compare `ARIUpdateLine` with).
    public static func decodeTokens(_ line: String, limits: ARILimits = .default) throws(ARIProtocolError) -> ARIRemoteLine {
        if line == ARIMethod.keepalive.rawValue { return .keepalive }
        let tokens = try ARITokenizer.tokens(of: line, limits: limits)
        guard tokens.count >= 2 else { throw .missingMethod }
        let id = String(tokens[0])
        guard let method = ARIMethod(rawValue: String(tokens[1])) else { throw .unknownMethod(String(tokens[1])) }
        var r = ARIArgumentReader(tokens: tokens, position: 2, limits: limits)
        let decoded: ARIRemoteLine
        switch method {
        case .remoteCredentials:
            decoded = .remoteCredentials(ARIRemoteCredentials(pairs: try r.pairsToEnd()))
        case .update:
            let item = try r.nonNullString("item")
            let sub = try r.nonNullString("subscription id")
            var update = ARIUpdate(item: item, subscriptionId: sub, isSnapshot: try r.boolean(), fields: [])
            update.fields.reserveCapacity(r.remaining / 4)
            while !r.isAtEnd {
                let name = try r.nonNullString("field name")
                switch try r.anyValue() {
                case .string(let s): update.fields.append(ARIField(name, .text(s)))
                case .bytes(let b): update.fields.append(ARIField(name, .bytes(b)))
                case let other: throw .unexpectedType(expected: "S or Y", found: other.type.rawValue)
                }
            }
            decoded = .update(update)
        case .endOfSnapshot:
            decoded = .endOfSnapshot(item: try r.nonNullString("item"), subscriptionId: try r.nonNullString("subscription id"))
        case .clearSnapshot:
            decoded = .clearSnapshot(item: try r.nonNullString("item"), subscriptionId: try r.nonNullString("subscription id"))
        case .failure:
            guard let first = r.peek, ARIErrorReply.isTag(first) else { throw .missingArgument(expected: "E") }
            decoded = .failure(message: try ARIErrorReply.read(from: &r).message)
        case .diffOrders:
            let item = try r.nonNullString("item")
            let sub = try r.nonNullString("subscription id")
            var fields: [ARIDiffOrder] = []
            while !r.isAtEnd {
                let name = try r.nonNullString("field name")
                guard case .diffAlgorithms(let a) = try r.value(.diffAlgorithms) else { throw .missingArgument(expected: "F") }
                fields.append(ARIDiffOrder(field: name, algorithms: a))
            }
            decoded = .diffOrders(item: item, subscriptionId: sub, fields: fields)
        case .keepalive, .close:
            throw .unexpectedMethod(method.rawValue)
        default:
            decoded = .reply(try ARIReply.read(id: id, method: method, &r))
        }
        try r.finish()
        return decoded
    }

    /// The line for this message, as a remote writes it; `timestamp` (milliseconds) leads the
    /// unsolicited data lines.
    public func encode(timestamp: Int64 = 0) -> String {
        let stamp = String(timestamp)
        switch self {
        case .keepalive:
            return ARIMethod.keepalive.rawValue
        case .remoteCredentials(let c):
            var w = ARILineWriter(id: "1", method: ARIMethod.remoteCredentials.rawValue)
            w.pairs(c.pairs)
            return w.line
        case .reply(let reply):
            return reply.encode()
        case .update(let u):
            var w = ARILineWriter(id: stamp, method: ARIMethod.update.rawValue)
            w.string(u.item)
            w.string(u.subscriptionId)
            w.append(.boolean(u.isSnapshot))
            for f in u.fields {
                w.string(f.name)
                switch f.value {
                case .text(let s): w.string(s)
                case .bytes(let b): w.append(.bytes(b))
                }
            }
            return w.line
        case .endOfSnapshot(let item, let sub), .clearSnapshot(let item, let sub):
            var w = ARILineWriter(id: stamp, method: self.isEndOfSnapshot ? "EOS" : "CLS")
            w.string(item)
            w.string(sub)
            return w.line
        case .failure(let message):
            var w = ARILineWriter(id: stamp, method: ARIMethod.failure.rawValue)
            ARIErrorReply.generic(message: message).write(to: &w)
            return w.line
        case .diffOrders(let item, let sub, let fields):
            var w = ARILineWriter(id: stamp, method: ARIMethod.diffOrders.rawValue)
            w.string(item)
            w.string(sub)
            for f in fields {
                w.string(f.field)
                w.append(.diffAlgorithms(f.algorithms))
            }
            return w.line
        }
    }

    private var isEndOfSnapshot: Bool {
        if case .endOfSnapshot = self { return true }
        return false
    }
}

/// The diff algorithms a remote offers for one field, in the order to try them.
public struct ARIDiffOrder: Sendable, Hashable {
    public var field: String
    public var algorithms: [ARIDiffAlgorithm]?

    public init(field: String, algorithms: [ARIDiffAlgorithm]?) {
        self.field = field
        self.algorithms = algorithms
    }
}
