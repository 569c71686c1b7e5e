/// The request fields real-time (`Subscription`) and MPN (`MPNSubscription`) subscriptions
/// share: items or an item group, fields or a field schema, the data adapter, and the buffer
/// size and frequency asked for. Items and item group are exclusive, as are fields and field
/// schema: setting one clears the other.
struct SubscriptionRequest<BufferSize: Equatable & Sendable, MaxFrequency: Equatable & Sendable>: Sendable, Equatable {
    private(set) var items: [String]?
    private(set) var itemGroup: String?
    private(set) var fields: [String]?
    private(set) var fieldSchema: String?
    var dataAdapter: String?
    var bufferSize: BufferSize?
    var maxFrequency: MaxFrequency?

    /// Sets the item names and clears the item group.
    mutating func setItems(_ value: [String]?) {
        items = value
        itemGroup = nil
    }

    /// Sets the item group and clears the item names.
    mutating func setItemGroup(_ value: String?) {
        itemGroup = value
        items = nil
    }

    /// Sets the field names and clears the field schema.
    mutating func setFields(_ value: [String]?) {
        fields = value
        fieldSchema = nil
    }

    /// Sets the field schema and clears the field names.
    mutating func setFieldSchema(_ value: String?) {
        fieldSchema = value
        fields = nil
    }

    /// The group as sent to the server: the item group, or the item names separated by spaces.
    var group: String? { itemGroup ?? items?.joined(separator: " ") }
    /// The schema as sent to the server: the field schema, or the field names separated by spaces.
    var schema: String? { fieldSchema ?? fields?.joined(separator: " ") }

    /// What `description` shows for the items: the list, else the group.
    var itemsDescription: (any CustomStringConvertible)? { items ?? itemGroup }
    /// What `description` shows for the fields: the list, else the schema.
    var fieldsDescription: (any CustomStringConvertible)? { fields ?? fieldSchema }
}

/// The checks on `SubscriptionRequest` values, with the messages each API traps with (the
/// official clients word them differently for real-time and MPN subscriptions).
struct SubscriptionRequestRules: Sendable {
    /// The object's name in "Cannot modify an active …".
    var objectName: String
    var isValidItemName: @Sendable (String) -> Bool
    var emptyItemList: String
    var invalidItemName: @Sendable (String) -> String
    var emptyFieldList: String
    var invalidFieldName: @Sendable (String) -> String
    var emptyItemGroup: String
    var emptyFieldSchema: String
    var emptyDataAdapter: String
    var nonPositiveBufferSize: String
    var nonPositiveFrequency: String

    /// Field names: non-empty, no space.
    static func isValidFieldName(_ name: String) -> Bool { !name.isEmpty && !name.contains(" ") }

    func checkInactive(_ active: Bool) {
        precondition(!active, "Cannot modify an active \(objectName)")
    }

    func checkItems(_ items: [String]) {
        precondition(!items.isEmpty, emptyItemList)
        for i in items { precondition(isValidItemName(i), invalidItemName(i)) }
    }

    func checkFields(_ fields: [String]) {
        precondition(!fields.isEmpty, emptyFieldList)
        for f in fields { precondition(Self.isValidFieldName(f), invalidFieldName(f)) }
    }

    func checkItemGroup(_ group: String) { precondition(!group.isEmpty, emptyItemGroup) }
    func checkFieldSchema(_ schema: String) { precondition(!schema.isEmpty, emptyFieldSchema) }
    func checkDataAdapter(_ adapter: String) { precondition(!adapter.isEmpty, emptyDataAdapter) }
    /// `size`: the number of a limited buffer size.
    func checkBufferSize(_ size: Int) { precondition(size > 0, nonPositiveBufferSize) }
    /// `frequency`: the number of a limited frequency.
    func checkFrequency(_ frequency: Double) { precondition(frequency > 0, nonPositiveFrequency) }
}
