/// RFC 6902 JSON Patch over `JSONValue`, with RFC 6901 JSON Pointers: applying (client) and
/// producing (server).
public enum JSONPatch {
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { "JSON Patch: \(message)" }
    }

    /// Applies a patch document (a JSON array of operations) to a JSON text and returns the
    /// compact serialization of the result. Both texts, and every step of the result, must stay
    /// within `limits`.
    public static func apply(patch: String, to base: String, limits: Limits = .default) throws(Error) -> String {
        let doc: JSONValue
        let target: JSONValue
        do {
            // The operations array and each operation object add two levels above the values.
            doc = try JSONValue.parse(patch, maxDepth: Saturating.add(limits.maxDepth, 2))
            target = try JSONValue.parse(base, maxDepth: limits.maxDepth)
        } catch {
            throw Error(message: error.description)
        }
        return try apply(doc, to: target, limits: limits).serialized
    }

    /// Applies a parsed patch document. Each operation is checked against `limits` before it is
    /// carried out (a `copy` is measured before anything is copied), so a hostile patch fails
    /// without first building a huge document.
    public static func apply(_ patch: JSONValue, to base: JSONValue, limits: Limits = .default) throws(Error) -> JSONValue {
        guard case .array(let ops) = patch else { throw Error(message: "patch is not an array") }
        let baseSize = base.size
        guard baseSize.fits(limits) else { throw Error(message: "the document to patch is larger than the limits") }
        var tally = Tally(baseSize, limits)
        var doc = base
        for op in ops {
            try tally.chargeOperation()
            guard case .object(let m) = op else { throw Error(message: "operation is not an object") }
            func member(_ k: String) -> JSONValue? { m.first { $0.key == k }?.value }
            func stringMember(_ k: String) throws(Error) -> String {
                guard case .string(let s)? = member(k) else { throw Error(message: "missing '\(k)'") }
                return s
            }
            let name = try stringMember("op")
            let path = try pointer(try stringMember("path"))
            switch name {
            case "add":
                guard let v = member("value") else { throw Error(message: "add without value") }
                try add(v, at: path, in: &doc, tally: &tally)
            case "remove":
                _ = try remove(at: path, in: &doc, tally: &tally)
            case "replace":
                guard let v = member("value") else { throw Error(message: "replace without value") }
                try replace(with: v, at: path, in: &doc, tally: &tally)
            case "move":
                let from = try pointer(try stringMember("from"))
                if from != path {
                    guard !(path.count > from.count && Array(path.prefix(from.count)) == from) else {
                        throw Error(message: "cannot move a value into itself")
                    }
                    let v = try remove(at: from, in: &doc, tally: &tally)
                    try add(v, at: path, in: &doc, tally: &tally)
                }
            case "copy":
                let from = try pointer(try stringMember("from"))
                try add(try get(from, in: doc), at: path, in: &doc, tally: &tally)
            case "test":
                guard let v = member("value") else { throw Error(message: "test without value") }
                guard try get(path, in: doc).isEquivalent(to: v) else { throw Error(message: "test failed") }
            default:
                throw Error(message: "unknown op '\(name.prefix(20))'")
            }
        }
        return doc
    }

    /// Parses an RFC 6901 pointer into reference tokens.
    static func pointer(_ text: String) throws(Error) -> [String] {
        if text.isEmpty { return [] }
        guard text.hasPrefix("/") else { throw Error(message: "bad pointer '\(text.prefix(40))'") }
        var tokens: [String] = []
        for rawBytes in text.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            let raw = Substring(rawBytes)
            var t = ""
            var it = raw.makeIterator()
            while let c = it.next() {
                if c == "~" {
                    switch it.next() {
                    case "0": t.append("~")
                    case "1": t.append("/")
                    default: throw Error(message: "bad ~ escape in pointer")
                    }
                } else {
                    t.append(c)
                }
            }
            tokens.append(t)
        }
        return tokens
    }

    static func encodePointer(_ tokens: [String]) -> String {
        tokens.map { "/" + $0.replacingAll("~", "~0").replacingAll("/", "~1") }.joined()
    }

    static func arrayIndex(_ token: String, count: Int, allowEnd: Bool) throws(Error) -> Int {
        if allowEnd && token == "-" { return count }
        guard let i = Int(decimalDigits: token), i >= 0, token == String(i) else {
            throw Error(message: "bad array index '\(token.prefix(20))'")
        }
        guard i < count || (allowEnd && i == count) else { throw Error(message: "array index \(i) out of range") }
        return i
    }

    static func get(_ path: [String], in doc: JSONValue) throws(Error) -> JSONValue {
        var cur = doc
        for t in path {
            switch cur {
            case .object(let m):
                guard let v = m.first(where: { $0.key == t })?.value else { throw Error(message: "no member '\(t.prefix(40))'") }
                cur = v
            case .array(let a):
                cur = a[try arrayIndex(t, count: a.count, allowEnd: false)]
            default:
                throw Error(message: "path goes through a scalar")
            }
        }
        return cur
    }

    /// Runs `body` on the container that holds the last token of `path`.
    static func withParent<T>(
        _ path: [String], in doc: inout JSONValue, depth: Int = 0,
        _ body: (inout JSONValue, String) throws(Error) -> T
    ) throws(Error) -> T {
        guard let last = path.last else { throw Error(message: "empty path") }
        if depth == path.count - 1 { return try body(&doc, last) }
        let t = path[depth]
        switch doc {
        case .object(var m):
            guard let i = m.firstIndex(where: { $0.key == t }) else { throw Error(message: "no member '\(t.prefix(40))'") }
            doc = .null
            defer { doc = .object(m) }
            return try withParent(path, in: &m[i].value, depth: depth + 1, body)
        case .array(var a):
            let i = try arrayIndex(t, count: a.count, allowEnd: false)
            doc = .null
            defer { doc = .array(a) }
            return try withParent(path, in: &a[i], depth: depth + 1, body)
        default:
            throw Error(message: "path goes through a scalar")
        }
    }

    /// Adds (or, for an existing member, replaces) `value` at `path`, after `tally` has
    /// accepted the change in size.
    static func add(_ value: JSONValue, at path: [String], in doc: inout JSONValue, tally: inout Tally) throws(Error) {
        let size = value.size
        try tally.checkDepth(of: size, at: path.count)
        if path.isEmpty {
            let old = doc.size
            try tally.change(nodes: size.nodes - old.nodes, bytes: size.bytes - old.bytes)
            doc = value
            return
        }
        try withParent(path, in: &doc) { (parent: inout JSONValue, key: String) throws(Error) in
            switch parent {
            case .object(var m):
                if let i = m.firstIndex(where: { $0.key == key }) {
                    let old = m[i].value.size
                    try tally.change(nodes: size.nodes - old.nodes, bytes: size.bytes - old.bytes)
                    parent = .null
                    m[i].value = value
                } else {
                    try tally.change(
                        nodes: size.nodes,
                        bytes: JSONValue.quotedLength(key) + 1 + size.bytes + (m.isEmpty ? 0 : 1))
                    parent = .null
                    m.append(JSONMember(key: key, value: value))
                }
                parent = .object(m)
            case .array(var a):
                let i = try arrayIndex(key, count: a.count, allowEnd: true)
                try tally.change(nodes: size.nodes, bytes: size.bytes + (a.isEmpty ? 0 : 1))
                parent = .null
                a.insert(value, at: i)
                parent = .array(a)
            default:
                throw Error(message: "cannot add into a scalar")
            }
        }
    }

    /// Replaces an existing value in place (members keep their position).
    static func replace(with value: JSONValue, at path: [String], in doc: inout JSONValue, tally: inout Tally) throws(Error) {
        let size = value.size
        try tally.checkDepth(of: size, at: path.count)
        if path.isEmpty {
            let old = doc.size
            try tally.change(nodes: size.nodes - old.nodes, bytes: size.bytes - old.bytes)
            doc = value
            return
        }
        try withParent(path, in: &doc) { (parent: inout JSONValue, key: String) throws(Error) in
            switch parent {
            case .object(var m):
                guard let i = m.firstIndex(where: { $0.key == key }) else { throw Error(message: "no member '\(key.prefix(40))'") }
                let old = m[i].value.size
                try tally.change(nodes: size.nodes - old.nodes, bytes: size.bytes - old.bytes)
                parent = .null
                m[i].value = value
                parent = .object(m)
            case .array(var a):
                let i = try arrayIndex(key, count: a.count, allowEnd: false)
                let old = a[i].size
                try tally.change(nodes: size.nodes - old.nodes, bytes: size.bytes - old.bytes)
                parent = .null
                a[i] = value
                parent = .array(a)
            default:
                throw Error(message: "cannot replace inside a scalar")
            }
        }
    }

    static func remove(at path: [String], in doc: inout JSONValue, tally: inout Tally) throws(Error) -> JSONValue {
        guard !path.isEmpty else { throw Error(message: "cannot remove the whole document") }
        return try withParent(path, in: &doc) { (parent: inout JSONValue, key: String) throws(Error) -> JSONValue in
            switch parent {
            case .object(var m):
                guard let i = m.firstIndex(where: { $0.key == key }) else { throw Error(message: "no member '\(key.prefix(40))'") }
                let old = m[i].value.size
                try tally.change(nodes: -old.nodes, bytes: -(JSONValue.quotedLength(key) + 1 + old.bytes + (m.count > 1 ? 1 : 0)))
                parent = .null
                let v = m.remove(at: i).value
                parent = .object(m)
                return v
            case .array(var a):
                let i = try arrayIndex(key, count: a.count, allowEnd: false)
                let old = a[i].size
                try tally.change(nodes: -old.nodes, bytes: -(old.bytes + (a.count > 1 ? 1 : 0)))
                parent = .null
                let v = a.remove(at: i)
                parent = .array(a)
                return v
            default:
                throw Error(message: "cannot remove from a scalar")
            }
        }
    }

    // MARK: Producing

    /// A patch turning `old` into `new`: members compared recursively, arrays of equal length
    /// element by element, anything else replaced.
    public static func make(from old: JSONValue, to new: JSONValue) -> JSONValue {
        var ops: [JSONValue] = []
        diff(old, new, path: [], into: &ops)
        return .array(ops)
    }

    static func op(_ name: String, _ path: [String], _ value: JSONValue?) -> JSONValue {
        var m = [JSONMember(key: "op", value: .string(name)), JSONMember(key: "path", value: .string(encodePointer(path)))]
        if let value { m.append(JSONMember(key: "value", value: value)) }
        return .object(m)
    }

    static func diff(_ a: JSONValue, _ b: JSONValue, path: [String], into ops: inout [JSONValue]) {
        if a == b { return }
        switch (a, b) {
        case (.object(let ma), .object(let mb)):
            let inA = JSONMemberIndex(ma)
            let inB = JSONMemberIndex(mb)
            for m in ma where inB.position(of: m.key, in: mb) == nil {
                ops.append(op("remove", path + [m.key], nil))
            }
            for m in mb {
                if let i = inA.position(of: m.key, in: ma) {
                    diff(ma[i].value, m.value, path: path + [m.key], into: &ops)
                } else {
                    ops.append(op("add", path + [m.key], m.value))
                }
            }
        case (.array(let xa), .array(let xb)) where xa.count == xb.count:
            for i in xa.indices { diff(xa[i], xb[i], path: path + [String(i)], into: &ops) }
        default:
            ops.append(op("replace", path, b))
        }
    }
}

extension String {
    func replacingAll(_ target: Character, _ replacement: String) -> String {
        guard contains(target) else { return self }
        var out = ""
        for c in self { if c == target { out.append(replacement) } else { out.append(c) } }
        return out
    }
}
