import Foundation
import TLCP

/// An MPN subscription (docs/protocol/CLIENT-API.md §12): what to push to the
/// registered device, in which format, optionally once a trigger expression holds. It lives on
/// the server beyond the session; objects with the same `subscriptionId` are the same
/// server-side subscription and are kept in step by the client.
///
/// Preconditions (programming errors, trapped as in the official client): item and field
/// properties, data adapter, buffer size and frequency can be set only while inactive; item
/// names must not be empty, contain a space or be a number; field names must not be empty or
/// contain a space; lists and names must not be empty.
/// `@unchecked Sendable`: every mutable property (`_mode` … `_delegates`) is only touched under `lock`.
public final class MPNSubscription: CustomStringConvertible, @unchecked Sendable {
    /// The mode of an MPN subscription: MERGE or DISTINCT.
    public enum Mode: String, CustomStringConvertible, Sendable {
        /// One state per item, updated field by field.
        case MERGE
        /// Each update is an event of its own.
        case DISTINCT
        /// The mode's name.
        public var description: String { rawValue }
        var wire: SubscriptionMode { self == .MERGE ? .merge : .distinct }
    }

    /// The buffer size an MPN subscription asks for: a number of updates or `unlimited`.
    public enum RequestedBufferSize: Equatable, CustomStringConvertible, Sendable {
        /// At most this many updates.
        case limited(Int)
        /// No limit.
        case unlimited
        /// `unlimited` or the number.
        public var description: String {
            switch self {
            case .limited(let n): return String(n)
            case .unlimited: return "unlimited"
            }
        }
        var wire: TLCP.RequestedBufferSize {
            switch self {
            case .limited(let n): return .size(n)
            case .unlimited: return .unlimited
            }
        }
        init?(serverValue: String) {
            if serverValue == "unlimited" { self = .unlimited } else if let n = Int(serverValue) { self = .limited(n) } else { return nil }
        }
    }

    /// The most notifications per second an MPN subscription asks for: a number or `unlimited`.
    public enum RequestedMaxFrequency: Equatable, CustomStringConvertible, Sendable {
        /// At most this many notifications per second.
        case limited(Double)
        /// No limit.
        case unlimited
        /// `unlimited` or the number of updates per second.
        public var description: String {
            switch self {
            case .limited(let f): return "\(f) updates/sec"
            case .unlimited: return "unlimited"
            }
        }
        var wire: RequestedFrequency {
            switch self {
            case .limited(let f): return .limited(f)
            case .unlimited: return .unlimited
            }
        }
        init?(serverValue: String) {
            if serverValue == "unlimited" { self = .unlimited } else if let f = Double(serverValue) { self = .limited(f) } else { return nil }
        }
    }

    /// The status of an MPN subscription: `UNKNOWN` while not active, `ACTIVE` while the
    /// activation is pending, `SUBSCRIBED` once the server has it, `TRIGGERED` once its trigger held.
    public enum Status: String, CustomStringConvertible, Sendable {
        /// Not active.
        case UNKNOWN
        /// Activation sent, not yet confirmed by the server.
        case ACTIVE
        /// The server has the subscription.
        case SUBSCRIBED
        /// The trigger held and the notification was sent.
        case TRIGGERED
        /// The status's name.
        public var description: String { rawValue }
    }

    let lock = Lock()
    private var _mode: Mode
    private var _items: [String]?
    private var _itemGroup: String?
    private var _fields: [String]?
    private var _fieldSchema: String?
    private var _dataAdapter: String?
    private var _bufferSize: RequestedBufferSize?
    private var _maxFrequency: RequestedMaxFrequency?
    private var _trigger: String?
    private var _format: String?
    private var _actualTrigger: String?
    private var _actualFormat: String?
    private var _status: Status = .UNKNOWN
    private var _statusTimestamp: Int64 = 0
    private var _subscriptionId: String?
    private var _delegates = DelegateList<MPNSubscriptionDelegate>()
    /// The client this object is active on, and its key there.
    weak var manager: MPNManager?
    var key: Int?

    /// An MPN subscription in `subscriptionMode` with no items, fields or format yet.
    public init(subscriptionMode: Mode) {
        _mode = subscriptionMode
    }

    /// An MPN subscription to one item with a list of fields.
    public convenience init(subscriptionMode: Mode, item: String, fields: [String]) {
        self.init(subscriptionMode: subscriptionMode, items: [item], fields: fields)
    }

    /// An MPN subscription to a list of items with a list of fields.
    public convenience init(subscriptionMode: Mode, items: [String], fields: [String]) {
        self.init(subscriptionMode: subscriptionMode)
        self.items = items
        self.fields = fields
    }

    /// Copies mode, items, fields, data adapter, buffer size and frequency of a real-time
    /// subscription. Preconditions: its mode is MERGE or DISTINCT; its frequency is not
    /// `unfiltered`.
    public init(subscription: Subscription) {
        switch subscription.mode {
        case .MERGE: _mode = .MERGE
        case .DISTINCT: _mode = .DISTINCT
        default: preconditionFailure("MPN subscriptions support only MERGE and DISTINCT modes")
        }
        _items = subscription.items
        _itemGroup = subscription.itemGroup
        _fields = subscription.fields
        _fieldSchema = subscription.fieldSchema
        _dataAdapter = subscription.dataAdapter
        switch subscription.requestedBufferSize {
        case .limited(let n)?: _bufferSize = .limited(n)
        case .unlimited?: _bufferSize = .unlimited
        case nil: _bufferSize = nil
        }
        switch subscription.requestedMaxFrequency {
        case .limited(let f)?: _maxFrequency = .limited(f)
        case .unlimited?: _maxFrequency = .unlimited
        case .unfiltered?: preconditionFailure("MPN subscriptions do not support the unfiltered frequency")
        case nil: _maxFrequency = nil
        }
    }

    /// Copies every requested property of another MPN subscription (not its id or status).
    public init(MPNSubscription mpnSubscription: MPNSubscription) {
        let o = mpnSubscription
        let v = o.lock.withLock {
            (o._mode, o._items, o._itemGroup, o._fields, o._fieldSchema, o._dataAdapter, o._bufferSize, o._maxFrequency,
             o._trigger ?? o._actualTrigger, o._format ?? o._actualFormat)
        }
        _mode = v.0
        _items = v.1
        _itemGroup = v.2
        _fields = v.3
        _fieldSchema = v.4
        _dataAdapter = v.5
        _bufferSize = v.6
        _maxFrequency = v.7
        _trigger = v.8
        _format = v.9
    }

    // MARK: properties

    /// The subscription mode.
    public var mode: Mode { lock.withLock { _mode } }

    private func checkInactive() {
        precondition(lock.withLock { _status == .UNKNOWN }, "Cannot modify an active MPNSubscription")
    }

    private func changedLocally(_ property: String) {
        notify([.property(property)])
    }

    /// The trigger: while inactive the requested one, while active the one the server reports
    /// (nil until known). Can be set at any time: on an active subscription the change is sent
    /// to the server (`pn_reconf`); nil removes the trigger.
    public var triggerExpression: String? {
        get { lock.withLock { _status == .UNKNOWN ? _trigger : _actualTrigger } }
        set {
            let active = lock.withLock { () -> Bool in
                _trigger = newValue
                return _status != .UNKNOWN
            }
            if active, let manager, let key { manager.modify(key: key, .trigger(newValue)) } else { changedLocally("trigger") }
        }
    }

    /// The trigger as the server last reported it; nil until known, or when there is none.
    public var actualTriggerExpression: String? { lock.withLock { _actualTrigger } }

    /// The notification format (JSON): while inactive the requested one, while active the one
    /// the server reports. Can be set at any time, like `triggerExpression`.
    public var notificationFormat: String? {
        get { lock.withLock { _status == .UNKNOWN ? _format : _actualFormat } }
        set {
            let active = lock.withLock { () -> Bool in
                _format = newValue
                return _status != .UNKNOWN
            }
            if active, let manager, let key { manager.modify(key: key, .format(newValue)) } else { changedLocally("notification_format") }
        }
    }

    /// The notification format as the server last reported it; nil until known.
    public var actualNotificationFormat: String? { lock.withLock { _actualFormat } }

    /// The data adapter of the items; nil for the adapter set's `DEFAULT`. Settable while inactive.
    public var dataAdapter: String? {
        get { lock.withLock { _dataAdapter } }
        set {
            checkInactive()
            if let newValue { precondition(!newValue.isEmpty, "The data adapter name must not be empty") }
            lock.withLock { _dataAdapter = newValue }
            changedLocally("adapter")
        }
    }

    /// The field names. Settable while inactive.
    public var fields: [String]? {
        get { lock.withLock { _fields } }
        set {
            checkInactive()
            if let newValue {
                precondition(!newValue.isEmpty, "Field list is empty")
                precondition(newValue.allSatisfy { !$0.isEmpty && !$0.contains(" ") }, "Field name is empty or contains a space")
            }
            lock.withLock { _fields = newValue; _fieldSchema = nil }
            changedLocally("schema")
        }
    }

    /// A field schema name, resolved by the server's Metadata Adapter, instead of a field list.
    /// Settable while inactive.
    public var fieldSchema: String? {
        get { lock.withLock { _fieldSchema } }
        set {
            checkInactive()
            if let newValue { precondition(!newValue.isEmpty, "Field schema is empty") }
            lock.withLock { _fieldSchema = newValue; _fields = nil }
            changedLocally("schema")
        }
    }

    /// An item group name, resolved by the server's Metadata Adapter, instead of an item list.
    /// Settable while inactive.
    public var itemGroup: String? {
        get { lock.withLock { _itemGroup } }
        set {
            checkInactive()
            if let newValue { precondition(!newValue.isEmpty, "Item group is empty") }
            lock.withLock { _itemGroup = newValue; _items = nil }
            changedLocally("group")
        }
    }

    /// The item names. Settable while inactive.
    public var items: [String]? {
        get { lock.withLock { _items } }
        set {
            checkInactive()
            if let newValue {
                precondition(!newValue.isEmpty, "Item list is empty")
                precondition(newValue.allSatisfy { !$0.isEmpty && !$0.contains(" ") && Int($0) == nil },
                             "Item name is empty, contains a space or is a number")
            }
            lock.withLock { _items = newValue; _itemGroup = nil }
            changedLocally("group")
        }
    }

    /// The buffer size asked for; nil lets the server decide. Settable while inactive.
    public var requestedBufferSize: RequestedBufferSize? {
        get { lock.withLock { _bufferSize } }
        set {
            checkInactive()
            if case .limited(let n)? = newValue { precondition(n > 0, "The buffer size must be positive") }
            lock.withLock { _bufferSize = newValue }
            changedLocally("requested_buffer_size")
        }
    }

    /// The notification frequency asked for; nil lets the server decide. Settable while inactive.
    public var requestedMaxFrequency: RequestedMaxFrequency? {
        get { lock.withLock { _maxFrequency } }
        set {
            checkInactive()
            if case .limited(let f)? = newValue { precondition(f > 0, "The frequency must be positive") }
            lock.withLock { _maxFrequency = newValue }
            changedLocally("requested_max_frequency")
        }
    }

    /// Whether the subscription is active (its status is not `UNKNOWN`).
    public var isActive: Bool { lock.withLock { _status != .UNKNOWN } }
    /// Whether the server has the subscription (`SUBSCRIBED` or `TRIGGERED`).
    public var isSubscribed: Bool { lock.withLock { _status == .SUBSCRIBED || _status == .TRIGGERED } }
    /// Whether the trigger held and the notification was sent (`TRIGGERED`).
    public var isTriggered: Bool { lock.withLock { _status == .TRIGGERED } }
    /// The current status.
    public var status: Status { lock.withLock { _status } }
    /// When the status last changed, in the server's milliseconds; 0 until known.
    public var statusTimestamp: Int64 { lock.withLock { _statusTimestamp } }
    /// The server's permanent id of the subscription; nil until the server accepted it.
    public var subscriptionId: String? { lock.withLock { _subscriptionId } }

    // MARK: delegates

    /// Adds a delegate, which receives the subscription's events; it is told with
    /// `mpnSubscriptionDidAddDelegate`.
    public func addDelegate(_ delegate: MPNSubscriptionDelegate) {
        let added = lock.withLock { _delegates.add(delegate) }
        guard added else { return }
        let box = UncheckedBox((delegate, self))
        CallbackQueue.queue.async { box.value.0.mpnSubscriptionDidAddDelegate(box.value.1) }
    }

    /// Removes a delegate; it is told with `mpnSubscriptionDidRemoveDelegate`.
    public func removeDelegate(_ delegate: MPNSubscriptionDelegate) {
        let removed = lock.withLock { _delegates.remove(delegate) }
        guard removed else { return }
        let box = UncheckedBox((delegate, self))
        CallbackQueue.queue.async { box.value.0.mpnSubscriptionDidRemoveDelegate(box.value.1) }
    }

    /// The delegates currently added.
    public var delegates: [MPNSubscriptionDelegate] { lock.withLock { _delegates.all } }

    /// `[mode: …, items: …, fields: …, …, trigger: …, notificationFormat: …]`: the requested
    /// values, unset ones left out.
    public var description: String {
        lock.withLock {
            var map = DescriptionMap()
            map.add("mode", _mode)
            map.add("items", _items ?? _itemGroup)
            map.add("fields", _fields ?? _fieldSchema)
            map.add("dataAdapter", _dataAdapter)
            map.add("requestedBufferSize", _bufferSize)
            map.add("requestedMaxFrequency", _maxFrequency)
            map.add("trigger", _trigger)
            map.add("notificationFormat", _format)
            return map.description
        }
    }


    // MARK: engine side

    /// What the engine needs to activate this subscription (requested values).
    var request: MPNRequest {
        lock.withLock {
            MPNRequest(mode: _mode, group: _itemGroup ?? _items?.joined(separator: " "),
                       schema: _fieldSchema ?? _fields?.joined(separator: " "), dataAdapter: _dataAdapter,
                       bufferSize: _bufferSize, maxFrequency: _maxFrequency, format: _format, trigger: _trigger)
        }
    }

    /// Copies the engine's view of this subscription.
    func apply(_ s: MPNEngine.SubscriptionState) {
        lock.withLock {
            _status = s.status
            _statusTimestamp = s.timestamp
            _subscriptionId = s.id
            if let v = s.server {
                _actualFormat = v.format
                _actualTrigger = v.trigger
                if let g = v.group { _itemGroup = g; _items = nil }
                if let sc = v.schema { _fieldSchema = sc; _fields = nil }
                if let a = v.adapter { _dataAdapter = a }
                if let m = v.mode.flatMap(Mode.init(rawValue:)) { _mode = m }
                if let b = v.bufferSize { _bufferSize = RequestedBufferSize(serverValue: b) }
                if let f = v.maxFrequency { _maxFrequency = RequestedMaxFrequency(serverValue: f) }
            }
        }
    }

    /// Dispatches events to the delegates on the callback queue.
    func notify(_ events: [MPNEngine.SubscriptionEvent]) {
        guard !events.isEmpty else { return }
        let targets = delegates
        guard !targets.isEmpty else { return }
        let box = UncheckedBox((targets, self, events))
        CallbackQueue.queue.async {
            let (ds, s, es) = box.value
            for e in es {
                for d in ds { e.deliver(to: d, s) }
            }
        }
    }
}

/// The requested values of an MPN subscription, by value.
struct MPNRequest: Sendable, Equatable {
    var mode: MPNSubscription.Mode
    var group: String?
    var schema: String?
    var dataAdapter: String?
    var bufferSize: MPNSubscription.RequestedBufferSize?
    var maxFrequency: MPNSubscription.RequestedMaxFrequency?
    var format: String?
    var trigger: String?
}
