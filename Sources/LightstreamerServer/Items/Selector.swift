/// `LS_selector`: a filter a subscription applies to each update of its items.
///
/// Syntax (this server's own, documented in docs/CONFIG.md): one or more conditions joined by
/// `&`; each condition is `field=value` (equal) or `field!=value` (different), where `field`
/// is a field of the subscription's schema and `value` the literal text to compare (may be
/// empty; `#` alone stands for null). Spaces at either end of a condition and around the field
/// name are ignored. Anything else is refused with code 25.
///
/// What is compared: the row the update produces (MERGE: the item's whole current row;
/// DISTINCT, RAW: the event; COMMAND: the key's row). A MERGE/DISTINCT/RAW update that does not
/// match is not delivered. In COMMAND mode a key enters the subscription (`ADD`) when its row
/// starts matching and leaves it (`DELETE`) when it stops.
struct ItemSelector: Sendable, Hashable {
    struct Condition: Sendable, Hashable {
        var fieldIndex: Int
        var value: String?
        var equal: Bool
    }

    var conditions: [Condition]

    init(parsing text: String, fields: [String]) throws(ItemEngineError) {
        var conditions: [Condition] = []
        for part in text.split(separator: "&", omittingEmptySubsequences: false) {
            let condition = part.trimmingSpaces()
            guard !condition.isEmpty else { throw .badSelector("empty condition") }
            let name: Substring
            let raw: Substring
            let equal: Bool
            if let r = condition.firstRange(of: "!=") {
                name = condition[..<r.lowerBound]
                raw = condition[r.upperBound...]
                equal = false
            } else if let i = condition.firstIndex(of: "=") {
                name = condition[..<i]
                raw = condition[condition.index(after: i)...]
                equal = true
            } else {
                throw .badSelector("'\(condition.prefix(40))' is not field=value or field!=value")
            }
            let fieldName = String(name.trimmingSpaces())
            guard let index = fields.firstIndex(of: fieldName) else {
                throw .badSelector("field '\(fieldName.prefix(40))' is not in the schema")
            }
            conditions.append(Condition(fieldIndex: index, value: raw == "#" ? nil : String(raw), equal: equal))
        }
        self.conditions = conditions
    }

    func matches(_ row: [String?]) -> Bool {
        for c in conditions {
            let v = c.fieldIndex < row.count ? row[c.fieldIndex] : nil
            if (v == c.value) != c.equal { return false }
        }
        return true
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return s
    }
}
