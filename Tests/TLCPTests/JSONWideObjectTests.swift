import Testing

@testable import TLCP

/// Objects with many members (`JSONMemberIndex`): parsing, JSON Patch's diff and equivalence
/// find members through a hash table past 16 members, and must give what scanning gave.
@Suite(.timeLimit(.minutes(1))) struct JSONWideObjectTests {
    /// Keys from a small set, so that objects repeat some.
    static func key(_ r: inout Rand, among n: Int) -> String { "k\(r.int(0...(n - 1)))" }

    /// Objects of 0–60 members with repeated keys parse as the rule says: a repeated key keeps
    /// its first place and takes the later value (worked out here the plain way).
    @Test func repeatedKeysKeepTheirFirstPlaceAndTakeTheLastValue() throws {
        var r = Rand(state: 0x51DE_0B7E)
        for _ in 0..<400 {
            let pairs = (0..<r.int(0...60)).map { i in (Self.key(&r, among: r.int(1...80)), i) }
            var expected: [JSONMember] = []
            for (k, v) in pairs {
                if let i = expected.firstIndex(where: { $0.key == k }) {
                    expected[i].value = .number(String(v))
                } else {
                    expected.append(JSONMember(key: k, value: .number(String(v))))
                }
            }
            let text = "{" + pairs.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",") + "}"
            #expect(try JSONValue.parse(text) == .object(expected), "\(text)")
        }
    }

    /// A patch between two objects that share some members is the one the plain scan makes
    /// (same operations, same order), and applies back (to an equivalent object: members that
    /// only moved keep their old place).
    @Test func patchesOfWideObjectsAreThoseOfTheScan() throws {
        var r = Rand(state: 0xD1FF_5EED)
        for _ in 0..<200 {
            let a = Self.object(&r, members: r.int(0...50))
            let b = Self.object(&r, members: r.int(0...50))
            let patch = JSONPatch.make(from: a, to: b)
            #expect(patch == .array(Self.scanDiff(a, b, path: [])))
            #expect(try JSONPatch.apply(patch, to: a).isEquivalent(to: b))
        }
    }

    @Test func equivalenceIgnoresMemberOrderInWideObjects() throws {
        var r = Rand(state: 0xE0_1FA1)
        for n in [3, 16, 17, 40] {
            guard case .object(let members) = Self.object(&r, members: n, distinct: true) else { return }
            var shuffled = members
            shuffled.reverse()
            #expect(JSONValue.object(members).isEquivalent(to: .object(shuffled)))
            shuffled[n / 2].value = .string("changed")
            #expect(!JSONValue.object(members).isEquivalent(to: .object(shuffled)))
        }
    }

    /// 90,000 members (1.7 MB, within JSON Patch's default limits): parsed, diffed against a
    /// copy with one member changed, the patch applied back, and compared for equivalence. With
    /// a scan per member each of these took some 4×10^9 key comparisons (this suite's time
    /// limit fails it).
    @Test func anObjectOf90000MembersIsLinearWork() throws {
        let n = 90_000
        let text = "{" + (0..<n).map { #""member\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        let a = try JSONValue.parse(text)
        guard case .object(var members) = a else { throw JSONPatch.Error(message: "not an object") }
        #expect(members.count == n)
        members[n - 1].value = .string("last")
        let b = JSONValue.object(members)
        let patch = JSONPatch.make(from: a, to: b)
        #expect(patch.serialized == #"[{"op":"replace","path":"/member89999","value":"last"}]"#)
        #expect(try JSONPatch.apply(patch, to: a) == b)
        members.reverse()
        #expect(b.isEquivalent(to: .object(members)))
    }

    /// An object of `members` (at most 80) members with keys from k0…k79, or k0, k1… in order
    /// (`distinct`), and small values.
    static func object(_ r: inout Rand, members: Int, distinct: Bool = false) -> JSONValue {
        var out: [JSONMember] = []
        var i = 0
        while out.count < members {
            let k = distinct ? "k\(i)" : key(&r, among: 80)
            i += 1
            if out.contains(where: { $0.key == k }) { continue }
            let v: JSONValue =
                r.bool() ? .number(String(r.int(0...3))) : .object([JSONMember(key: "x", value: .number(String(r.int(0...2))))])
            out.append(JSONMember(key: k, value: v))
        }
        return .object(out)
    }

    /// JSON Patch's diff written with a scan per member (the reference).
    static func scanDiff(_ a: JSONValue, _ b: JSONValue, path: [String]) -> [JSONValue] {
        if a == b { return [] }
        switch (a, b) {
        case (.object(let ma), .object(let mb)):
            var ops: [JSONValue] = []
            for m in ma where !mb.contains(where: { $0.key == m.key }) { ops.append(JSONPatch.op("remove", path + [m.key], nil)) }
            for m in mb {
                if let old = ma.first(where: { $0.key == m.key }) {
                    ops += scanDiff(old.value, m.value, path: path + [m.key])
                } else {
                    ops.append(JSONPatch.op("add", path + [m.key], m.value))
                }
            }
            return ops
        case (.array(let xa), .array(let xb)) where xa.count == xb.count:
            return xa.indices.flatMap { scanDiff(xa[$0], xb[$0], path: path + [String($0)]) }
        default:
            return [JSONPatch.op("replace", path, b)]
        }
    }
}
