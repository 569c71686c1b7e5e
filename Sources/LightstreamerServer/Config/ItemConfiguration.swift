/// `dataAdapters[].items[]`: one item (or `count` numbered items) and its behaviour.
///
/// ```json
/// {"name": "static1", "behavior": "static", "fields": {"a": "1"}}
/// {"name": "tick", "count": 100, "behavior": "counter", "updatesPerSecond": 10,
///  "counterFields": ["count"], "constantFields": {"kind": "load"}}
/// {"name": "px", "behavior": "randomWalk", "updatesPerSecond": 2,
///  "walkFields": {"last": {"start": 100, "step": 0.5, "min": 1, "max": 1000, "decimals": 2}}}
/// {"name": "book", "behavior": "commandTable", "rows": [{"key": "a", "qty": "10"}],
///  "updatesPerSecond": 1, "updateFields": ["qty"], "churn": true}
/// ```
struct ItemConfiguration: Decodable {
    /// The item names: `name`, or `name1`…`nameN` with `count: N`.
    var names: [String]
    var behavior: SimulatedDataAdapter.Behavior

    private static let common = ["name", "count", "behavior"]
    private static let behaviorKeys: [String: [String]] = [
        "static": ["fields"],
        "counter": ["updatesPerSecond", "counterFields", "constantFields", "start", "step"],
        "randomWalk": ["updatesPerSecond", "walkFields", "constantFields"],
        "commandTable": ["rows", "updatesPerSecond", "updateFields", "churn"],
    ]
    private static let behaviorNames = ["static", "counter", "randomWalk", "commandTable"]

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        func key(_ s: String) -> AnyCodingKey { AnyCodingKey(stringValue: s) }
        let name = try c.decode(String.self, forKey: key("name"))
        guard !name.isEmpty, !name.contains(" ") else {
            throw decoder.invalid("expected a non-empty item name without spaces", at: key("name"))
        }
        if let count = try c.decodeIfPresent(Int.self, forKey: key("count")) {
            guard (1...100_000).contains(count) else {
                throw decoder.invalid("expected a count from 1 to 100000, got \(count)", at: key("count"))
            }
            names = (1...count).map { "\(name)\($0)" }
        } else {
            names = [name]
        }
        let kind = try c.decode(String.self, forKey: key("behavior"))
        guard let keys = Self.behaviorKeys[kind] else {
            throw decoder.invalid(
                "unknown behavior '\(kind)'; expected one of: \(Self.behaviorNames.joined(separator: ", "))",
                at: key("behavior"))
        }
        try decoder.rejectUnknownKeys(Self.common + keys)

        func fields(_ k: String) throws -> [String: String?] {
            ConfigFieldValue.fields(try c.decodeIfPresent([String: ConfigFieldValue].self, forKey: key(k)) ?? [:])
        }
        switch kind {
        case "static":
            behavior = .staticValues(try fields("fields"))
        case "counter":
            let counterFields = try c.decode([String].self, forKey: key("counterFields"))
            guard !counterFields.isEmpty else {
                throw decoder.invalid("expected at least one field name", at: key("counterFields"))
            }
            behavior = .counter(
                .init(
                    updatesPerSecond: try c.rate("updatesPerSecond", decoder, required: true) ?? 0,
                    counterFields: counterFields, constantFields: try fields("constantFields"),
                    start: try c.decodeIfPresent(Int.self, forKey: key("start")) ?? 0,
                    step: try c.decodeIfPresent(Int.self, forKey: key("step")) ?? 1))
        case "randomWalk":
            let walk = try c.decode([String: WalkFieldConfiguration].self, forKey: key("walkFields"))
            guard !walk.isEmpty else { throw decoder.invalid("expected at least one field", at: key("walkFields")) }
            behavior = .randomWalk(
                .init(
                    updatesPerSecond: try c.rate("updatesPerSecond", decoder, required: true) ?? 0,
                    fields: walk.mapValues(\.field), constantFields: try fields("constantFields")))
        default:
            let rows = try c.decode([[String: ConfigFieldValue]].self, forKey: key("rows")).map(ConfigFieldValue.fields)
            var keys = Set<String>()
            for (i, row) in rows.enumerated() {
                let at = AnyCodingKey(intValue: i)
                guard case .some(.some(let k)) = row[ItemState.keyField], !k.isEmpty else {
                    throw DecodingError.dataCorrupted(
                        .init(
                            codingPath: decoder.codingPath + [key("rows"), at],
                            debugDescription: "every row needs a non-empty \"key\""))
                }
                guard keys.insert(k).inserted else {
                    throw DecodingError.dataCorrupted(
                        .init(
                            codingPath: decoder.codingPath + [key("rows"), at],
                            debugDescription: "duplicate key '\(k)'"))
                }
                if row[ItemState.commandField] != nil {
                    throw DecodingError.dataCorrupted(
                        .init(
                            codingPath: decoder.codingPath + [key("rows"), at],
                            debugDescription: "rows must not set \"command\" (it is always ADD)"))
                }
            }
            behavior = .commandTable(
                .init(
                    rows: rows, updatesPerSecond: try c.rate("updatesPerSecond", decoder, required: false) ?? 0,
                    updateFields: try c.decodeIfPresent([String].self, forKey: key("updateFields")) ?? [],
                    churn: try c.decodeIfPresent(Bool.self, forKey: key("churn")) ?? false))
        }
    }
}

/// `walkFields.<name>`: a value that moves randomly within bounds.
struct WalkFieldConfiguration: Decodable {
    var field: SimulatedDataAdapter.WalkField

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(["start", "step", "min", "max", "decimals"])
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        func key(_ s: String) -> AnyCodingKey { AnyCodingKey(stringValue: s) }
        let start = try c.decode(Double.self, forKey: key("start"))
        let step = try c.decode(Double.self, forKey: key("step"))
        let min = try c.decodeIfPresent(Double.self, forKey: key("min")) ?? -1e9
        let max = try c.decodeIfPresent(Double.self, forKey: key("max")) ?? 1e9
        let decimals = try c.decodeIfPresent(Int.self, forKey: key("decimals")) ?? 2
        guard [start, step, min, max].allSatisfy({ $0.isFinite && abs($0) <= 1e12 }) else {
            throw decoder.invalid("expected finite numbers no larger than 1e12")
        }
        guard step > 0 else { throw decoder.invalid("expected a step greater than 0", at: key("step")) }
        guard min <= start, start <= max else { throw decoder.invalid("expected min <= start <= max") }
        guard (0...9).contains(decimals) else { throw decoder.invalid("expected 0 to 9 decimals", at: key("decimals")) }
        field = .init(start: start, step: step, min: min, max: max, decimals: decimals)
    }
}
