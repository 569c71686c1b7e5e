import Foundation
import NIOConcurrencyHelpers
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
public final class MPNSubscription: CustomStringConvertible, Sendable {
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
            if serverValue == "unlimited" {
                self = .unlimited
            } else if let f = Double(serverValue) {
                self = .limited(f)
            } else {
                return nil
            }
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

    private let state: NIOLockedValueBox<State>

    /// The mutable state, only touched under the box's lock.
    /// `@unchecked Sendable`: the delegates are of the official API's non-`Sendable` protocol; the box's lock guards them.
    private struct State: @unchecked Sendable {
        var mode: Mode
        var request = SubscriptionRequest<RequestedBufferSize, RequestedMaxFrequency>()
        var trigger: String?
        var format: String?
        var actualTrigger: String?
        var actualFormat: String?
        var status: Status = .UNKNOWN
        var statusTimestamp: Int64 = 0
        var subscriptionId: String?
        var delegates = DelegateList<MPNSubscriptionDelegate>()
        /// The client this object is active on, and its key there.
        weak var manager: MPNManager?
        var key: Int?

        init(mode: Mode) { self.mode = mode }
    }

    /// The client's MPN manager this object is active on.
    var manager: MPNManager? {
        get { state.withLockedValue { $0.manager } }
        set { state.withLockedValue { $0.manager = newValue } }
    }

    /// The object's key in its manager.
    var key: Int? {
        get { state.withLockedValue { $0.key } }
        set { state.withLockedValue { $0.key = newValue } }
    }

    /// An MPN subscription in `subscriptionMode` with no items, fields or format yet.
    public init(subscriptionMode: Mode) {
        state = NIOLockedValueBox(State(mode: subscriptionMode))
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
        let mode: Mode
        switch subscription.mode {
        case .MERGE: mode = .MERGE
        case .DISTINCT: mode = .DISTINCT
        default: preconditionFailure("MPN subscriptions support only MERGE and DISTINCT modes")
        }
        var s = State(mode: mode)
        if let group = subscription.itemGroup { s.request.setItemGroup(group) } else { s.request.setItems(subscription.items) }
        if let schema = subscription.fieldSchema { s.request.setFieldSchema(schema) } else { s.request.setFields(subscription.fields) }
        s.request.dataAdapter = subscription.dataAdapter
        switch subscription.requestedBufferSize {
        case .limited(let n)?: s.request.bufferSize = .limited(n)
        case .unlimited?: s.request.bufferSize = .unlimited
        case nil: s.request.bufferSize = nil
        }
        switch subscription.requestedMaxFrequency {
        case .limited(let f)?: s.request.maxFrequency = .limited(f)
        case .unlimited?: s.request.maxFrequency = .unlimited
        case .unfiltered?: preconditionFailure("MPN subscriptions do not support the unfiltered frequency")
        case nil: s.request.maxFrequency = nil
        }
        state = NIOLockedValueBox(s)
    }

    /// Copies every requested property of another MPN subscription (not its id or status).
    public init(MPNSubscription mpnSubscription: MPNSubscription) {
        let copy = mpnSubscription.state.withLockedValue { o in
            var s = State(mode: o.mode)
            s.request = o.request
            s.trigger = o.trigger ?? o.actualTrigger
            s.format = o.format ?? o.actualFormat
            return s
        }
        state = NIOLockedValueBox(copy)
    }

    // MARK: properties

    /// The subscription mode.
    public var mode: Mode { state.withLockedValue { s in s.mode } }

    /// The checks of the request fields, with this API's messages.
    static let rules = SubscriptionRequestRules(
        objectName: "MPNSubscription", isValidItemName: { !$0.isEmpty && !$0.contains(" ") && Int($0) == nil },
        emptyItemList: "Item list is empty", invalidItemName: { _ in "Item name is empty, contains a space or is a number" },
        emptyFieldList: "Field list is empty", invalidFieldName: { _ in "Field name is empty or contains a space" },
        emptyItemGroup: "Item group is empty", emptyFieldSchema: "Field schema is empty",
        emptyDataAdapter: "The data adapter name must not be empty", nonPositiveBufferSize: "The buffer size must be positive",
        nonPositiveFrequency: "The frequency must be positive")

    private func checkInactive() {
        Self.rules.checkInactive(state.withLockedValue { $0.status != .UNKNOWN })
    }

    private func changedLocally(_ property: String) {
        notify([.property(property)])
    }

    /// The trigger: while inactive the requested one, while active the one the server reports
    /// (nil until known). Can be set at any time: on an active subscription the change is sent
    /// to the server (`pn_reconf`); nil removes the trigger.
    public var triggerExpression: String? {
        get { state.withLockedValue { s in s.status == .UNKNOWN ? s.trigger : s.actualTrigger } }
        set {
            let active = state.withLockedValue { s -> Bool in
                s.trigger = newValue
                return s.status != .UNKNOWN
            }
            if active, let manager, let key { manager.modify(key: key, .trigger(newValue)) } else { changedLocally("trigger") }
        }
    }

    /// The trigger as the server last reported it; nil until known, or when there is none.
    public var actualTriggerExpression: String? { state.withLockedValue { s in s.actualTrigger } }

    /// The notification format (JSON): while inactive the requested one, while active the one
    /// the server reports. Can be set at any time, like `triggerExpression`.
    public var notificationFormat: String? {
        get { state.withLockedValue { s in s.status == .UNKNOWN ? s.format : s.actualFormat } }
        set {
            let active = state.withLockedValue { s -> Bool in
                s.format = newValue
                return s.status != .UNKNOWN
            }
            if active, let manager, let key { manager.modify(key: key, .format(newValue)) } else { changedLocally("notification_format") }
        }
    }

    /// The notification format as the server last reported it; nil until known.
    public var actualNotificationFormat: String? { state.withLockedValue { s in s.actualFormat } }

    /// The data adapter of the items; nil for the adapter set's `DEFAULT`. Settable while inactive.
    public var dataAdapter: String? {
        get { state.withLockedValue { $0.request.dataAdapter } }
        set {
            checkInactive()
            if let newValue { Self.rules.checkDataAdapter(newValue) }
            state.withLockedValue { $0.request.dataAdapter = newValue }
            changedLocally("adapter")
        }
    }

    /// The field names. Settable while inactive.
    public var fields: [String]? {
        get { state.withLockedValue { $0.request.fields } }
        set {
            checkInactive()
            if let newValue { Self.rules.checkFields(newValue) }
            state.withLockedValue { $0.request.setFields(newValue) }
            changedLocally("schema")
        }
    }

    /// A field schema name, resolved by the server's Metadata Adapter, instead of a field list.
    /// Settable while inactive.
    public var fieldSchema: String? {
        get { state.withLockedValue { $0.request.fieldSchema } }
        set {
            checkInactive()
            if let newValue { Self.rules.checkFieldSchema(newValue) }
            state.withLockedValue { $0.request.setFieldSchema(newValue) }
            changedLocally("schema")
        }
    }

    /// An item group name, resolved by the server's Metadata Adapter, instead of an item list.
    /// Settable while inactive.
    public var itemGroup: String? {
        get { state.withLockedValue { $0.request.itemGroup } }
        set {
            checkInactive()
            if let newValue { Self.rules.checkItemGroup(newValue) }
            state.withLockedValue { $0.request.setItemGroup(newValue) }
            changedLocally("group")
        }
    }

    /// The item names. Settable while inactive.
    public var items: [String]? {
        get { state.withLockedValue { $0.request.items } }
        set {
            checkInactive()
            if let newValue { Self.rules.checkItems(newValue) }
            state.withLockedValue { $0.request.setItems(newValue) }
            changedLocally("group")
        }
    }

    /// The buffer size asked for; nil lets the server decide. Settable while inactive.
    public var requestedBufferSize: RequestedBufferSize? {
        get { state.withLockedValue { $0.request.bufferSize } }
        set {
            checkInactive()
            if case .limited(let n)? = newValue { Self.rules.checkBufferSize(n) }
            state.withLockedValue { $0.request.bufferSize = newValue }
            changedLocally("requested_buffer_size")
        }
    }

    /// The notification frequency asked for; nil lets the server decide. Settable while inactive.
    public var requestedMaxFrequency: RequestedMaxFrequency? {
        get { state.withLockedValue { $0.request.maxFrequency } }
        set {
            checkInactive()
            if case .limited(let f)? = newValue { Self.rules.checkFrequency(f) }
            state.withLockedValue { $0.request.maxFrequency = newValue }
            changedLocally("requested_max_frequency")
        }
    }

    /// Whether the subscription is active (its status is not `UNKNOWN`).
    public var isActive: Bool { state.withLockedValue { s in s.status != .UNKNOWN } }
    /// Whether the server has the subscription (`SUBSCRIBED` or `TRIGGERED`).
    public var isSubscribed: Bool { state.withLockedValue { s in s.status == .SUBSCRIBED || s.status == .TRIGGERED } }
    /// Whether the trigger held and the notification was sent (`TRIGGERED`).
    public var isTriggered: Bool { state.withLockedValue { s in s.status == .TRIGGERED } }
    /// The current status.
    public var status: Status { state.withLockedValue { s in s.status } }
    /// When the status last changed, in the server's milliseconds; 0 until known.
    public var statusTimestamp: Int64 { state.withLockedValue { s in s.statusTimestamp } }
    /// The server's permanent id of the subscription; nil until the server accepted it.
    public var subscriptionId: String? { state.withLockedValue { s in s.subscriptionId } }

    // MARK: delegates

    /// Adds a delegate, which receives the subscription's events; it is told with
    /// `mpnSubscriptionDidAddDelegate`.
    public func addDelegate(_ delegate: MPNSubscriptionDelegate) {
        let added = state.withLockedValue { s in s.delegates.add(delegate) }
        guard added else { return }
        let box = UncheckedBox(delegate)
        CallbackQueue.queue.async { box.value.mpnSubscriptionDidAddDelegate(self) }
    }

    /// Removes a delegate; it is told with `mpnSubscriptionDidRemoveDelegate`.
    public func removeDelegate(_ delegate: MPNSubscriptionDelegate) {
        let removed = state.withLockedValue { s in s.delegates.remove(delegate) }
        guard removed else { return }
        let box = UncheckedBox(delegate)
        CallbackQueue.queue.async { box.value.mpnSubscriptionDidRemoveDelegate(self) }
    }

    /// The delegates currently added.
    public var delegates: [MPNSubscriptionDelegate] { state.withLockedValue { s in s.delegates.all } }

    /// `[mode: …, items: …, fields: …, …, trigger: …, notificationFormat: …]`: the requested
    /// values, unset ones left out.
    public var description: String {
        state.withLockedValue { s in
            var map = DescriptionMap()
            map.add("mode", s.mode)
            map.add("items", s.request.itemsDescription)
            map.add("fields", s.request.fieldsDescription)
            map.add("dataAdapter", s.request.dataAdapter)
            map.add("requestedBufferSize", s.request.bufferSize)
            map.add("requestedMaxFrequency", s.request.maxFrequency)
            map.add("trigger", s.trigger)
            map.add("notificationFormat", s.format)
            return map.description
        }
    }

    // MARK: engine side

    /// What the engine needs to activate this subscription (requested values).
    var request: MPNRequest {
        state.withLockedValue { s in
            MPNRequest(
                mode: s.mode, group: s.request.group, schema: s.request.schema, dataAdapter: s.request.dataAdapter,
                bufferSize: s.request.bufferSize, maxFrequency: s.request.maxFrequency, format: s.format, trigger: s.trigger)
        }
    }

    /// Copies the engine's view of this subscription.
    func apply(_ engineState: MPNEngine.SubscriptionState) {
        state.withLockedValue { s in
            s.status = engineState.status
            s.statusTimestamp = engineState.timestamp
            s.subscriptionId = engineState.id
            if let v = engineState.server {
                s.actualFormat = v.format
                s.actualTrigger = v.trigger
                if let g = v.group { s.request.setItemGroup(g) }
                if let sc = v.schema { s.request.setFieldSchema(sc) }
                if let a = v.adapter { s.request.dataAdapter = a }
                if let m = v.mode.flatMap(Mode.init(rawValue:)) { s.mode = m }
                if let b = v.bufferSize { s.request.bufferSize = RequestedBufferSize(serverValue: b) }
                if let f = v.maxFrequency { s.request.maxFrequency = RequestedMaxFrequency(serverValue: f) }
            }
        }
    }

    /// Dispatches events to the delegates on the callback queue.
    func notify(_ events: [MPNEngine.SubscriptionEvent]) {
        guard !events.isEmpty else { return }
        let targets = delegates
        guard !targets.isEmpty else { return }
        let box = UncheckedBox(targets)
        CallbackQueue.queue.async {
            for e in events {
                for d in box.value { e.deliver(to: d, self) }
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
