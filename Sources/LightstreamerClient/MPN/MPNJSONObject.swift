import TLCP

/// An ordered JSON object under construction: setting nil removes a member; a new member goes
/// to the end of the canonical order given by `order` (members not listed go after, sorted).
struct MPNJSONObject: Sendable {
    private(set) var members: [String: JSONValue] = [:]

    init() {}

    init(_ members: [JSONMember]) {
        for m in members { self.members[m.key] = m.value }
    }

    subscript(key: String) -> JSONValue? {
        get { members[key] }
        set { members[key] = newValue }
    }

    var isEmpty: Bool { members.isEmpty }

    /// The members in `order` first, then the others sorted by key.
    func json(order: [String]) -> JSONValue {
        var list: [JSONMember] = []
        for k in order { if let v = members[k] { list.append(JSONMember(key: k, value: v)) } }
        for k in members.keys.sorted() where !order.contains(k) {
            if let v = members[k] { list.append(JSONMember(key: k, value: v)) }
        }
        return .object(list)
    }
}
