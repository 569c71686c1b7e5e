/// `ItemUpdate` (docs/protocol/CLIENT-API.md §9): one update of one item, as delivered to
/// `SubscriptionDelegate.subscription(_:didUpdateItem:)`.
public protocol ItemUpdate: AnyObject, CustomStringConvertible {
    /// The item's name, when the subscription was built with item names; nil otherwise.
    var itemName: String? { get }
    /// The item's 1-based position in the subscription.
    var itemPos: Int { get }
    /// Whether the update is part of the item's snapshot.
    var isSnapshot: Bool { get }
    /// Changed fields by name. Precondition: the subscription was built with a field list.
    var changedFields: [String: String?] { get }
    /// Changed fields by 1-based position.
    var changedFieldsByPositions: [Int: String?] { get }
    /// All fields by name. Precondition: the subscription was built with a field list.
    var fields: [String: String?] { get }
    /// All fields by 1-based position.
    var fieldsByPositions: [Int: String?] { get }
    /// The value of the field at `fieldPos` (nil is null). Precondition: `fieldPos` is in
    /// 1...number of fields.
    func value(withFieldPos fieldPos: Int) -> String?
    /// The value of the named field (nil is null). Precondition: the subscription has a field
    /// list that contains `fieldName`.
    func value(withFieldName fieldName: String) -> String?
    /// Whether the field at `fieldPos` changed with this update.
    func isValueChanged(withFieldPos fieldPos: Int) -> Bool
    /// Whether the named field changed with this update.
    func isValueChanged(withFieldName fieldName: String) -> Bool
    /// The JSON Patch that turned the previous value into this one, when the server sent one.
    func valueAsJSONPatchIfAvailable(withFieldName fieldName: String) -> String?
    /// The JSON Patch for the field at `fieldPos`, when the server sent one.
    func valueAsJSONPatchIfAvailable(withFieldPos fieldPos: Int) -> String?
}

/// The library's `ItemUpdate`: an immutable snapshot of one item after one update.
final class ItemUpdateValue: ItemUpdate, Sendable {
    let itemName: String?
    let itemPos: Int
    let isSnapshot: Bool
    /// Field values and changed flags, position `p` at index `p - 1`.
    let row: FieldRow
    /// Field names when the subscription has field lists (first level then second level).
    let fieldNames: [String]?
    /// JSON Patches received for this update, by field index.
    let patches: [Int: String]

    init(
        itemName: String?, itemPos: Int, isSnapshot: Bool, values: [String?], changed: [Bool],
        fieldNames: [String]?, patches: [Int: String] = [:]
    ) {
        self.itemName = itemName
        self.itemPos = itemPos
        self.isSnapshot = isSnapshot
        self.row = FieldRow.make(values: values, changed: changed)
        self.fieldNames = fieldNames
        self.patches = patches
    }

    init(itemName: String?, itemPos: Int, isSnapshot: Bool, row: FieldRow, fieldNames: [String]?, patches: [Int: String]) {
        self.itemName = itemName
        self.itemPos = itemPos
        self.isSnapshot = isSnapshot
        self.row = row
        self.fieldNames = fieldNames
        self.patches = patches
    }

    /// Field values, position `p` at index `p - 1` (made on each call).
    var values: [String?] { row.values }
    /// Changed flags, position `p` at index `p - 1` (made on each call).
    var changed: [Bool] { row.changedFlags }

    private func index(ofName name: String) -> Int {
        guard let names = fieldNames else {
            preconditionFailure("Field names are not available: the subscription uses a field schema")
        }
        guard let i = names.firstIndex(of: name), i < row.count else { preconditionFailure("Unknown field name") }
        return i
    }

    private func index(ofPos pos: Int) -> Int {
        precondition(pos >= 1 && pos <= row.count, "Field position out of range")
        return pos - 1
    }

    var changedFields: [String: String?] {
        guard let names = fieldNames else {
            preconditionFailure("Field names are not available: the subscription uses a field schema")
        }
        let values = values
        let changed = changed
        var out: [String: String?] = [:]
        for i in values.indices where changed[i] && i < names.count { out[names[i]] = .some(values[i]) }
        return out
    }

    var changedFieldsByPositions: [Int: String?] {
        let values = values
        let changed = changed
        var out: [Int: String?] = [:]
        for i in values.indices where changed[i] { out[i + 1] = .some(values[i]) }
        return out
    }

    var fields: [String: String?] {
        guard let names = fieldNames else {
            preconditionFailure("Field names are not available: the subscription uses a field schema")
        }
        let values = values
        var out: [String: String?] = [:]
        for i in values.indices where i < names.count { out[names[i]] = .some(values[i]) }
        return out
    }

    var fieldsByPositions: [Int: String?] {
        let values = values
        var out: [Int: String?] = [:]
        for i in values.indices { out[i + 1] = .some(values[i]) }
        return out
    }

    func value(withFieldPos fieldPos: Int) -> String? { row.string(index(ofPos: fieldPos)) }
    func value(withFieldName fieldName: String) -> String? { row.string(index(ofName: fieldName)) }
    func isValueChanged(withFieldPos fieldPos: Int) -> Bool { row.isChanged(index(ofPos: fieldPos)) }
    func isValueChanged(withFieldName fieldName: String) -> Bool { row.isChanged(index(ofName: fieldName)) }
    func valueAsJSONPatchIfAvailable(withFieldName fieldName: String) -> String? { patches[index(ofName: fieldName)] }
    func valueAsJSONPatchIfAvailable(withFieldPos fieldPos: Int) -> String? { patches[index(ofPos: fieldPos)] }

    /// `[name:value,name:value]` in field order (positions from 1 where fields have no
    /// names, `nil` for null values), the official layout.
    var description: String {
        var s = "["
        let values = values
        for (i, v) in values.enumerated() {
            if i > 0 { s += "," }
            s += fieldNames.flatMap { i < $0.count ? $0[i] : nil } ?? String(i + 1)
            s += ":"
            s += v ?? "nil"
        }
        return s + "]"
    }
}

extension ItemUpdate {
    /// All values (position `p` at index `p - 1`), their changed flags and the field names, as
    /// the library holds them: no dictionaries are built. For the `lightstreamer` CLI's printers
    /// (SPI, not public API). Other `ItemUpdate` implementations go through
    /// `fieldsByPositions`/`changedFieldsByPositions` (no names).
    @_spi(Printing) public var fieldArrays: (values: [String?], changed: [Bool], names: [String]?) {
        if let u = self as? ItemUpdateValue { return (u.values, u.changed, u.fieldNames) }
        let byPosition = fieldsByPositions
        let changedByPosition = changedFieldsByPositions
        let n = byPosition.keys.max() ?? 0
        return ((0..<n).map { byPosition[$0 + 1] ?? nil }, (0..<n).map { changedByPosition[$0 + 1] != nil }, nil)
    }
}

/// The values and changed flags of an update read in place, as the library holds them: no
/// `String` per value. For the `lightstreamer` CLI's printers (SPI, not public API). (Its
/// inlinable readers read `FieldRow`'s layout.)
@_spi(Printing) public struct FieldBytes {
    @usableFromInline let row: FieldRow
    /// The field names, when the subscription has field lists.
    public let names: [String]?

    init(row: FieldRow, names: [String]?) {
        self.row = row
        self.names = names
    }

    /// Fields in the update.
    @inlinable public var count: Int { row.count }

    /// The bytes of all the values together.
    @inlinable public var dataByteCount: Int {
        let n = row.count
        guard n > 0 else { return 0 }
        return row.buffer.withUnsafeMutablePointerToElements { base in
            // Null fields keep the running end too: the last end is the end of the data.
            Int(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: 4 * (n - 1), as: UInt32.self) & 0x7FFF_FFFF) - 5 * n
        }
    }

    /// Whether the field at index `i` (position `i + 1`) changed.
    @inlinable public func isChanged(_ i: Int) -> Bool {
        let n = row.count
        guard i >= 0, i < n else { return false }
        return row.buffer.withUnsafeMutablePointerToElements { $0[4 * n + i] != 0 }
    }

    /// Calls `body` with the UTF-8 bytes of the field at index `i` (position `i + 1`), nil when
    /// null or out of range.
    @inlinable public func withValue<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        let n = row.count
        guard i >= 0, i < n else { return body(nil) }
        return row.buffer.withUnsafeMutablePointerToElements { base in
            let raw = UnsafeRawPointer(base)
            let end = raw.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)
            if end & 0x8000_0000 != 0 { return body(nil) }
            let start = i == 0 ? 5 * n : Int(raw.loadUnaligned(fromByteOffset: 4 * (i - 1), as: UInt32.self) & 0x7FFF_FFFF)
            return body(UnsafeBufferPointer(start: base + start, count: Int(end) - start))
        }
    }
}

extension ItemUpdate {
    /// The update's values in place (`FieldBytes`). Other `ItemUpdate` implementations go
    /// through `fieldArrays`.
    @_spi(Printing) public var fieldBytes: FieldBytes {
        if let u = self as? ItemUpdateValue { return FieldBytes(row: u.row, names: u.fieldNames) }
        let (values, changed, names) = fieldArrays
        return FieldBytes(row: FieldRow.make(values: values, changed: changed), names: names)
    }
}
