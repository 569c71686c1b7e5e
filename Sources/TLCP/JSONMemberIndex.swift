/// Finds an object's members by key: by scanning while the object is small, through a hash
/// table once it has more than `scanLimit` members. Scanning alone made every step that looks
/// members up one by one quadratic in the object's size (the parser's check for repeated keys,
/// JSON Patch's diff, equivalence): an object of 100,000 members, 1.4 MB of text, took
/// billions of key comparisons, and such values come from servers and adapters.
struct JSONMemberIndex {
    /// Objects up to this size are scanned (cheaper than hashing for the usual few members).
    static let scanLimit = 16

    /// Key → position of its first member; nil while the object is scanned.
    private var positions: [String: Int]?

    /// An index of `members` as they are.
    @inline(__always) init(_ members: [JSONMember]) {
        positions = nil
        if members.count > Self.scanLimit { build(members) }
    }

    /// The position of the first member named `key`.
    @inline(__always) func position(of key: String, in members: [JSONMember]) -> Int? {
        guard let positions else { return members.firstIndex { $0.key == key } }
        return positions[key]
    }

    /// Records that `members` (which this index described before) gained a last member whose
    /// key it did not have; starts hashing when the object passes `scanLimit`.
    @inline(__always) mutating func appended(to members: [JSONMember]) {
        guard positions != nil else {
            if members.count > Self.scanLimit { build(members) }
            return
        }
        let last = members.count - 1
        positions?[members[last].key] = last
    }

    private mutating func build(_ members: [JSONMember]) {
        var table = [String: Int](minimumCapacity: members.count)
        for (i, m) in members.enumerated() where table[m.key] == nil { table[m.key] = i }
        positions = table
    }
}
