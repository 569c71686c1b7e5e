/// The layout of the public objects' `description`s, as the official client prints them:
/// `[key: value, key: value]`, keys in a fixed order, keys whose value is absent left out,
/// `[:]` when none is present. Values print with their own `description` (an array of item
/// names as `["item1", "item2"]`, a number of milliseconds as `2000`).
struct DescriptionMap: CustomStringConvertible {
    private var body = ""

    /// Adds `key` unless `value` is nil.
    mutating func add(_ key: String, _ value: (any CustomStringConvertible)?) {
        guard let value else { return }
        if !body.isEmpty { body += ", " }
        body += key
        body += ": "
        body += value.description
    }

    /// Adds `key` with `true` when `flag` is set (the official layout leaves false flags out).
    mutating func addFlag(_ key: String, _ flag: Bool) {
        add(key, flag ? true : nil)
    }

    /// Adds `key` when `value` is positive (0 means "not set" for these timeouts).
    mutating func addPositive(_ key: String, _ value: Int) {
        add(key, value > 0 ? value : nil)
    }

    var description: String { body.isEmpty ? "[:]" : "[" + body + "]" }
}
