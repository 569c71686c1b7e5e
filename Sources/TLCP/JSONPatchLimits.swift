extension JSONPatch {
    /// How large a document JSON Patch application may make. A `^P` patch comes from the server,
    /// and a few `copy` operations can double a document again and again (40 of them would ask for
    /// 2^40 values), or `add` can nest it ever deeper. Application checks every operation against
    /// these bounds before carrying it out, so a patch that would pass them fails (client error 61)
    /// without the memory ever being spent. The same bounds apply to the document the patch starts
    /// from. docs/RELIABILITY.md, "Numbers from a server", lists them.
    public struct Limits: Sendable, Hashable {
        /// Most levels of arrays and objects inside one another: `[]` and `{"a":1}` are 1 deep,
        /// `[[1]]` is 2, a lone scalar is 0.
        public var maxDepth: Int
        /// Most values in the document, counting every array, object and scalar (not member
        /// names).
        public var maxNodes: Int
        /// Longest compact serialization of the document, in UTF-8 bytes.
        public var maxBytes: Int
        /// Most work the operations may do together, in values: each operation is charged the
        /// document's size when it starts (finding its members, measuring and comparing values
        /// never walk more than the whole document). Without it a long patch of operations on a
        /// large object took minutes: 0.68 ms each on a 100,000-member object, and a 16 MB line
        /// holds some 350,000 of them.
        public var maxWork: Int

        public init(maxDepth: Int = 64, maxNodes: Int = 100_000, maxBytes: Int = 4 * 1024 * 1024, maxWork: Int = 50_000_000) {
            self.maxDepth = maxDepth
            self.maxNodes = maxNodes
            self.maxBytes = maxBytes
            self.maxWork = maxWork
        }

        /// 64 levels, 100,000 values, 4 MiB, 50,000,000 values of work (500 operations on a
        /// document of 100,000 values, 50,000 on one of 1,000).
        public static let `default` = Limits()
    }

    /// The size of a document or of a part of it.
    public struct Size: Sendable, Hashable {
        /// Values (arrays, objects and scalars).
        public var nodes: Int
        /// Bytes of the compact serialization (`JSONValue.serialized`).
        public var bytes: Int
        /// Levels of arrays and objects (see `Limits.maxDepth`).
        public var depth: Int

        public init(nodes: Int, bytes: Int, depth: Int) {
            self.nodes = nodes
            self.bytes = bytes
            self.depth = depth
        }

        /// Whether a document of this size is within `limits`.
        public func fits(_ limits: Limits) -> Bool {
            nodes <= limits.maxNodes && bytes <= limits.maxBytes && depth <= limits.maxDepth
        }
    }

    /// The running size of the document being patched: every operation asks it first.
    struct Tally {
        let limits: Limits
        var nodes: Int
        var bytes: Int
        /// Work charged so far (`Limits.maxWork`).
        var work = 0

        init(_ size: Size, _ limits: Limits) {
            self.limits = limits
            nodes = size.nodes
            bytes = size.bytes
        }

        /// Accepts a change of `nodes` values and `bytes` bytes, or throws without changing
        /// anything when the document would pass a bound.
        mutating func change(nodes dn: Int, bytes db: Int) throws(Error) {
            let n = Saturating.add(nodes, dn)
            let b = Saturating.add(bytes, db)
            guard n <= limits.maxNodes else {
                throw Error(message: "the document would have more than \(limits.maxNodes) values")
            }
            guard b <= limits.maxBytes else {
                throw Error(message: "the document would be longer than \(limits.maxBytes) bytes")
            }
            nodes = n
            bytes = b
        }

        /// Charges an operation the document's size, or throws when the patch's operations
        /// would pass `maxWork` together.
        mutating func chargeOperation() throws(Error) {
            let w = Saturating.add(work, max(1, nodes))
            guard w <= limits.maxWork else {
                throw Error(message: "the patch's operations would walk more than \(limits.maxWork) values")
            }
            work = w
        }

        /// Checks that `value` may go `level` containers deep (the length of its path).
        func checkDepth(of value: Size, at level: Int) throws(Error) {
            guard Saturating.add(level, value.depth) <= limits.maxDepth else {
                throw Error(message: "the document would be nested more than \(limits.maxDepth) levels deep")
            }
        }
    }
}

extension JSONValue {
    /// Values, serialized bytes and nesting depth of this value (see `JSONPatch.Limits`).
    public var size: JSONPatch.Size {
        switch self {
        case .null: return JSONPatch.Size(nodes: 1, bytes: 4, depth: 0)
        case .bool(let b): return JSONPatch.Size(nodes: 1, bytes: b ? 4 : 5, depth: 0)
        case .number(let n): return JSONPatch.Size(nodes: 1, bytes: n.utf8.count, depth: 0)
        case .string(let s): return JSONPatch.Size(nodes: 1, bytes: JSONValue.quotedLength(s), depth: 0)
        case .array(let items):
            var total = JSONPatch.Size(nodes: 1, bytes: 2 + max(0, items.count - 1), depth: 1)
            for v in items {
                let s = v.size
                total.nodes = Saturating.add(total.nodes, s.nodes)
                total.bytes = Saturating.add(total.bytes, s.bytes)
                total.depth = max(total.depth, s.depth + 1)
            }
            return total
        case .object(let members):
            var total = JSONPatch.Size(nodes: 1, bytes: 2 + max(0, members.count - 1), depth: 1)
            for m in members {
                let s = m.value.size
                total.nodes = Saturating.add(total.nodes, s.nodes)
                total.bytes = Saturating.add(total.bytes, Saturating.add(JSONValue.quotedLength(m.key) + 1, s.bytes))
                total.depth = max(total.depth, s.depth + 1)
            }
            return total
        }
    }

    /// Bytes `appendQuoted` writes for `s`.
    static func quotedLength(_ s: String) -> Int {
        var n = 2
        for b in s.utf8 {
            switch b {
            case 0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x08, 0x0C: n += 2
            case 0..<0x20: n += 6
            default: n += 1
            }
        }
        return n
    }
}
