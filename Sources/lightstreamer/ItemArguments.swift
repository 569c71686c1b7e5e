import ArgumentParser

/// What a subscription is to: items or an item group, fields or a field schema, and the data
/// adapter (shared by `subscribe` and `mpn subscribe`).
struct ItemArguments: ParsableArguments {
    @Option(help: "Comma-separated item names.") var items: String?
    @Option(help: "Item group name.") var group: String?
    @Option(help: "Comma-separated field names.") var fields: String?
    @Option(help: "Field schema name.") var schema: String?
    @Option(name: .customLong("data-adapter")) var dataAdapter: String?

    var itemList: [String]? { items.map(Self.splitList) }
    var fieldList: [String]? { fields.map(Self.splitList) }

    /// `a, b,c` → `["a", "b", "c"]`.
    static func splitList(_ s: String) -> [String] { s.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
}
