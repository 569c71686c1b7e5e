import Foundation
import NIOConcurrencyHelpers
import TLCP

/// A real-time subscription (docs/protocol/CLIENT-API.md §7). Properties describing the request can
/// be changed only while inactive (a trap otherwise, as in the official API); the
/// `requestedMaxFrequency` of an active subscription is changed on the server (reconf).
public final class Subscription: CustomStringConvertible, Sendable {
    /// The subscription mode, fixed at creation.
    public let mode: Mode
    private let state: NIOLockedValueBox<State>

    /// The mutable state, only touched under the box's lock.
    /// `@unchecked Sendable`: the delegates are of the official API's non-`Sendable` protocol; the box's lock guards them.
    private struct State: @unchecked Sendable {
        var request = SubscriptionRequest<RequestedBufferSize, RequestedMaxFrequency>()
        var selector: String?
        var snapshot: RequestedSnapshot?
        var secondFields: [String]?
        var secondSchema: String?
        var secondAdapter: String?
        var delegates = DelegateList<SubscriptionDelegate>()
        var active = false
        var subscribed = false
        var commandPosition: Int?
        var keyPosition: Int?
        weak var owner: ClientCore?
        var engineKey: Int?
        /// The latest values per item (index itemPos - 1).
        var itemValues: [FieldRow?] = []
        /// COMMAND rows per item position and key.
        var commandRows: [Int: [String: [String?]]] = [:]
    }

    /// The key of the subscription in its client's engine while active.
    var engineKey: Int? { state.withLockedValue { $0.engineKey } }

    /// A subscription in `subscriptionMode` with no items or fields yet; the snapshot is
    /// requested (`yes`) except in RAW mode.
    public init(subscriptionMode: Mode) {
        mode = subscriptionMode
        var s = State()
        s.snapshot = subscriptionMode == .RAW ? nil : .yes
        state = NIOLockedValueBox(s)
    }

    /// A subscription to one item with a list of fields.
    public convenience init(subscriptionMode: Mode, item: String, fields: [String]) {
        self.init(subscriptionMode: subscriptionMode, items: [item], fields: fields)
    }

    /// A subscription to a list of items with a list of fields.
    public convenience init(subscriptionMode: Mode, items: [String], fields: [String]) {
        self.init(subscriptionMode: subscriptionMode)
        Self.checkItems(items)
        Self.checkFields(fields, mode: subscriptionMode)
        state.withLockedValue { s in
            s.request.setItems(items)
            s.request.setFields(fields)
        }
    }

    private func checkInactive() {
        Self.rules.checkInactive(state.withLockedValue { $0.active })
    }

    private func checkCommand() {
        precondition(mode == .COMMAND, "This property can be set only on a COMMAND Subscription")
    }

    // MARK: delegates

    /// Adds a delegate, which receives the subscription's events; it is told with
    /// `subscriptionDidAddDelegate`. Adding one already present does nothing.
    public func addDelegate(_ delegate: SubscriptionDelegate) {
        let added = state.withLockedValue { s in s.delegates.add(delegate) }
        guard added else { return }
        let box = UncheckedBox(delegate)
        CallbackQueue.queue.async { box.value.subscriptionDidAddDelegate(self) }
    }

    /// Removes a delegate; it is told with `subscriptionDidRemoveDelegate`.
    public func removeDelegate(_ delegate: SubscriptionDelegate) {
        let removed = state.withLockedValue { s in s.delegates.remove(delegate) }
        guard removed else { return }
        let box = UncheckedBox(delegate)
        CallbackQueue.queue.async { box.value.subscriptionDidRemoveDelegate(self) }
    }

    /// The delegates currently added.
    public var delegates: [SubscriptionDelegate] { state.withLockedValue { s in s.delegates.all } }

    // MARK: properties

    /// The 1-based position of the `command` field in a COMMAND subscription, known once the server
    /// accepted it; nil before.
    public var commandPosition: Int? { state.withLockedValue { s in s.commandPosition } }
    /// The 1-based position of the `key` field in a COMMAND subscription, known once the server
    /// accepted it; nil before.
    public var keyPosition: Int? { state.withLockedValue { s in s.keyPosition } }

    /// The data adapter of the second-level items of a COMMAND subscription (two-level push); nil
    /// for the subscription's own. Settable while inactive, COMMAND mode only.
    public var commandSecondLevelDataAdapter: String? {
        get { state.withLockedValue { s in s.secondAdapter } }
        set {
            checkInactive()
            checkCommand()
            if let v = newValue { Self.rules.checkDataAdapter(v) }
            state.withLockedValue { s in s.secondAdapter = newValue }
        }
    }

    /// The fields of the second-level items of a COMMAND subscription (two-level push). Settable
    /// while inactive, COMMAND mode only; setting it clears `commandSecondLevelFieldSchema`.
    public var commandSecondLevelFields: [String]? {
        get { state.withLockedValue { s in s.secondFields } }
        set {
            checkInactive()
            checkCommand()
            if let v = newValue { Self.rules.checkFields(v) }
            state.withLockedValue { s in
                s.secondFields = newValue
                s.secondSchema = nil
            }
        }
    }

    /// The field schema of the second-level items of a COMMAND subscription, resolved by the
    /// server's Metadata Adapter. Settable while inactive, COMMAND mode only; setting it clears
    /// `commandSecondLevelFields`.
    public var commandSecondLevelFieldSchema: String? {
        get { state.withLockedValue { s in s.secondSchema } }
        set {
            checkInactive()
            checkCommand()
            if let v = newValue { Self.rules.checkFieldSchema(v) }
            state.withLockedValue { s in
                s.secondSchema = newValue
                s.secondFields = nil
            }
        }
    }

    /// The data adapter of the items; nil for the adapter set's `DEFAULT`. Settable while inactive.
    public var dataAdapter: String? {
        get { state.withLockedValue { $0.request.dataAdapter } }
        set {
            checkInactive()
            if let v = newValue { Self.rules.checkDataAdapter(v) }
            state.withLockedValue { $0.request.dataAdapter = newValue }
        }
    }

    /// The field names. Settable while inactive; setting it clears `fieldSchema`. A COMMAND
    /// subscription's list needs `key` and `command`.
    public var fields: [String]? {
        get { state.withLockedValue { $0.request.fields } }
        set {
            checkInactive()
            if let v = newValue { Self.checkFields(v, mode: mode) }
            state.withLockedValue { $0.request.setFields(newValue) }
        }
    }

    /// A field schema name, resolved by the server's Metadata Adapter, instead of a field list.
    /// Settable while inactive; setting it clears `fields`.
    public var fieldSchema: String? {
        get { state.withLockedValue { $0.request.fieldSchema } }
        set {
            checkInactive()
            if let v = newValue { Self.rules.checkFieldSchema(v) }
            state.withLockedValue { $0.request.setFieldSchema(newValue) }
        }
    }

    /// An item group name, resolved by the server's Metadata Adapter, instead of an item list.
    /// Settable while inactive; setting it clears `items`.
    public var itemGroup: String? {
        get { state.withLockedValue { $0.request.itemGroup } }
        set {
            checkInactive()
            if let v = newValue { Self.rules.checkItemGroup(v) }
            state.withLockedValue { $0.request.setItemGroup(newValue) }
        }
    }

    /// The item names. Settable while inactive; setting it clears `itemGroup`.
    public var items: [String]? {
        get { state.withLockedValue { $0.request.items } }
        set {
            checkInactive()
            if let v = newValue { Self.checkItems(v) }
            state.withLockedValue { $0.request.setItems(newValue) }
        }
    }

    /// The buffer size asked for; nil lets the server decide. Settable while inactive.
    public var requestedBufferSize: RequestedBufferSize? {
        get { state.withLockedValue { $0.request.bufferSize } }
        set {
            checkInactive()
            if case .limited(let n)? = newValue { Self.rules.checkBufferSize(n) }
            state.withLockedValue { $0.request.bufferSize = newValue }
        }
    }

    /// Changing it on an active subscription reconfigures it on the server; an active
    /// subscription cannot move to or from `unfiltered` or nil.
    public var requestedMaxFrequency: RequestedMaxFrequency? {
        get { state.withLockedValue { $0.request.maxFrequency } }
        set {
            precondition(mode != .RAW, "The frequency cannot be set on a RAW Subscription")
            if case .limited(let f)? = newValue { Self.rules.checkFrequency(f) }
            let (isActive, old, core, key) = state.withLockedValue { s in (s.active, s.request.maxFrequency, s.owner, s.engineKey) }
            if isActive {
                precondition(
                    newValue != nil && old != nil && newValue != .unfiltered && old != .unfiltered,
                    "Cannot change the frequency from/to 'unfiltered' or to nil while the Subscription is active")
            }
            state.withLockedValue { $0.request.maxFrequency = newValue }
            if isActive, let core, let key { core.changeFrequency(key: key, newValue?.wire) }
        }
    }

    /// The snapshot asked for (nil in RAW mode). Settable while inactive; a length only in DISTINCT mode.
    public var requestedSnapshot: RequestedSnapshot? {
        get { state.withLockedValue { s in s.snapshot } }
        set {
            checkInactive()
            if mode == .RAW { precondition(newValue == nil, "Snapshot is not permitted in RAW mode") }
            if case .length(let n)? = newValue {
                precondition(mode == .DISTINCT, "Snapshot length is permitted only in DISTINCT mode")
                precondition(n > 0, "The snapshot length must be greater than zero")
            }
            state.withLockedValue { s in s.snapshot = newValue }
        }
    }

    /// A selector name, which the server's Metadata Adapter applies to the updates. Settable while inactive.
    public var selector: String? {
        get { state.withLockedValue { s in s.selector } }
        set {
            checkInactive()
            if let v = newValue { precondition(!v.isEmpty, "The selector name is empty") }
            state.withLockedValue { s in s.selector = newValue }
        }
    }

    /// Whether the subscription was handed to a client with `subscribe` and not unsubscribed yet.
    public var isActive: Bool { state.withLockedValue { $0.active } }
    /// Whether the server currently has the subscription (active and accepted in the current session).
    public var isSubscribed: Bool { state.withLockedValue { $0.subscribed } }

    // MARK: values

    private func fieldIndex(_ name: String) -> Int {
        state.withLockedValue { s in
            let names = (s.request.fields ?? []) + (s.secondFields ?? [])
            guard s.request.fields != nil, let i = names.firstIndex(of: name) else { preconditionFailure("Unknown field name") }
            return i
        }
    }

    private func itemIndex(_ name: String) -> Int {
        state.withLockedValue { s in
            guard let i = s.request.items?.firstIndex(of: name) else { preconditionFailure("Unknown item name") }
            return i + 1
        }
    }

    /// The last value of a field of an item, by positions (1-based); nil when unknown or null.
    public func valueWithItemPos(_ itemPos: Int, fieldPos: Int) -> String? {
        precondition(itemPos >= 1 && fieldPos >= 1, "Positions start from 1")
        return state.withLockedValue { s in
            guard itemPos <= s.itemValues.count, let v = s.itemValues[itemPos - 1], fieldPos <= v.count else { return nil }
            return v.string(fieldPos - 1)
        }
    }

    /// The last value of a named field of an item given by position; nil when unknown or null.
    public func valueWithItemPos(_ itemPos: Int, fieldName: String) -> String? {
        valueWithItemPos(itemPos, fieldPos: fieldIndex(fieldName) + 1)
    }

    /// The last value of a field given by position of a named item; nil when unknown or null.
    public func valueWithItemName(_ itemName: String, fieldPos: Int) -> String? {
        valueWithItemPos(itemIndex(itemName), fieldPos: fieldPos)
    }

    /// The last value of a named field of a named item; nil when unknown or null.
    public func valueWithItemName(_ itemName: String, fieldName: String) -> String? {
        valueWithItemPos(itemIndex(itemName), fieldPos: fieldIndex(fieldName) + 1)
    }

    /// The last value of a field of the row `key` of a COMMAND item, by positions; nil when unknown.
    public func commandValueWithItemPos(_ itemPos: Int, key: String, fieldPos: Int) -> String? {
        precondition(mode == .COMMAND, "This method can be used only on COMMAND Subscriptions")
        precondition(itemPos >= 1 && fieldPos >= 1, "Positions start from 1")
        return state.withLockedValue { s in
            guard let row = s.commandRows[itemPos]?[key], fieldPos <= row.count else { return nil }
            return row[fieldPos - 1]
        }
    }

    /// The last value of a named field of the row `key` of a COMMAND item given by position.
    public func commandValueWithItemPos(_ itemPos: Int, key: String, fieldName: String) -> String? {
        precondition(mode == .COMMAND, "This method can be used only on COMMAND Subscriptions")
        return commandValueWithItemPos(itemPos, key: key, fieldPos: fieldIndex(fieldName) + 1)
    }

    /// The last value of a field given by position of the row `key` of a named COMMAND item.
    public func commandValueWithItemName(_ itemName: String, key: String, fieldPos: Int) -> String? {
        precondition(mode == .COMMAND, "This method can be used only on COMMAND Subscriptions")
        return commandValueWithItemPos(itemIndex(itemName), key: key, fieldPos: fieldPos)
    }

    /// The last value of a named field of the row `key` of a named COMMAND item.
    public func commandValueWithItemName(_ itemName: String, key: String, fieldName: String) -> String? {
        precondition(mode == .COMMAND, "This method can be used only on COMMAND Subscriptions")
        return commandValueWithItemPos(itemIndex(itemName), key: key, fieldPos: fieldIndex(fieldName) + 1)
    }

    /// `[mode: …, items: …, fields: …, …]`: the requested values, unset ones left out.
    public var description: String {
        state.withLockedValue { s in
            var map = DescriptionMap()
            map.add("mode", mode)
            map.add("items", s.request.itemsDescription)
            map.add("fields", s.request.fieldsDescription)
            map.add("dataAdapter", s.request.dataAdapter)
            map.add("requestedBufferSize", s.request.bufferSize)
            map.add("requestedSnapshot", s.snapshot)
            map.add("requestedMaxFrequency", s.request.maxFrequency)
            map.add("selector", s.selector)
            map.add("secondLevelFields", s.secondFields ?? s.secondSchema)
            map.add("secondLevelDataAdapter", s.secondAdapter)
            return map.description
        }
    }

    // MARK: library side

    /// The engine's copy of the request.
    var spec: SessionEngine.SubscriptionSpec {
        state.withLockedValue { v in
            var s = SessionEngine.SubscriptionSpec(mode: mode.wire)
            s.items = v.request.items
            s.itemGroup = v.request.itemGroup
            s.fields = v.request.fields
            s.fieldSchema = v.request.fieldSchema
            s.dataAdapter = v.request.dataAdapter
            s.selector = v.selector
            switch v.request.bufferSize {
            case .limited(let n)?: s.bufferSize = .size(n)
            case .unlimited?: s.bufferSize = .unlimited
            case nil: s.bufferSize = nil
            }
            s.maxFrequency = v.request.maxFrequency?.wire
            switch v.snapshot {
            case .yes?: s.snapshot = .yes
            case .no?: s.snapshot = .no
            case .length(let n)?: s.snapshot = .length(n)
            case nil: s.snapshot = nil
            }
            if mode == .COMMAND {
                s.secondLevelFields = v.secondFields
                s.secondLevelFieldSchema = v.secondSchema
                s.secondLevelDataAdapter = v.secondAdapter
            }
            return s
        }
    }

    /// Marks the subscription active on `core` with `key`, or traps when already active.
    func activate(core: ClientCore, key: Int) {
        state.withLockedValue { s in
            precondition(!s.active, "Cannot subscribe to an active Subscription")
            precondition(s.request.group != nil, "Specify property 'items' or 'itemGroup'")
            precondition(s.request.schema != nil, "Specify property 'fields' or 'fieldSchema'")
            s.active = true
            s.owner = core
            s.engineKey = key
            s.itemValues = []
            s.commandRows = [:]
        }
    }

    /// Marks the subscription inactive; returns its key when it was active on `core`.
    func deactivate(from core: ClientCore) -> Int? {
        state.withLockedValue { s in
            guard s.active else { return nil }
            precondition(s.owner === core, "The Subscription is active on another client")
            s.active = false
            let key = s.engineKey
            s.engineKey = nil
            return key
        }
    }

    /// After a failure the subscription is no longer active (only if still on `key`).
    func failed(key: Int) {
        state.withLockedValue { s in
            guard s.engineKey == key else { return }
            s.active = false
            s.subscribed = false
            s.engineKey = nil
        }
    }

    func setSubscribed(_ value: Bool, keyPosition: Int? = nil, commandPosition: Int? = nil) {
        state.withLockedValue { s in
            s.subscribed = value
            if value {
                s.keyPosition = keyPosition
                s.commandPosition = commandPosition
            }
        }
    }

    /// Stores an update's values for `valueWith…` (called on the callback queue).
    func store(_ u: ItemUpdateValue) {
        state.withLockedValue { s in
            let i = u.itemPos - 1
            if i >= 0 {
                // Positions come from the engine, within the subscription's item count.
                while s.itemValues.count <= i { s.itemValues.append(nil) }
                s.itemValues[i] = u.row
            }
            if mode == .COMMAND {
                let values = u.values
                if let kp = s.keyPosition, kp >= 1, kp <= values.count, let key = values[kp - 1] {
                    let cp = s.commandPosition ?? 0
                    if cp >= 1, cp <= values.count, values[cp - 1] == "DELETE" {
                        s.commandRows[u.itemPos]?.removeValue(forKey: key)
                    } else {
                        s.commandRows[u.itemPos, default: [:]][key] = values
                    }
                }
            }
        }
    }
}
