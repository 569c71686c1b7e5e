import TLCP

extension Subscription {
    /// The subscription mode: how the server and the client treat the item's updates.
    public enum Mode: String, CustomStringConvertible, Sendable, CaseIterable {
        /// The item has one state; each update changes some of its fields.
        case MERGE
        /// Each update is an event of its own (news, chat lines); the snapshot is a list of past events.
        case DISTINCT
        /// The item is a table of rows keyed by `key`, changed by `ADD`, `UPDATE` and `DELETE`.
        case COMMAND
        /// Every update is delivered as it comes: no snapshot, no frequency limit, no merging.
        case RAW
        /// The mode's name.
        public var description: String { rawValue }
        var wire: SubscriptionMode {
            switch self {
            case .MERGE: return .merge
            case .DISTINCT: return .distinct
            case .COMMAND: return .command
            case .RAW: return .raw
            }
        }
    }

    /// How many updates per item the server may keep for the subscription while it cannot send them.
    public enum RequestedBufferSize: Equatable, CustomStringConvertible, Sendable {
        /// At most this many updates per item.
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
    }

    /// The most updates per second per item the subscription asks for: a number, `unlimited`,
    /// or `unfiltered` (no update may be dropped or merged).
    public enum RequestedMaxFrequency: Equatable, CustomStringConvertible, Sendable {
        /// At most this many updates per second per item.
        case limited(Double)
        /// No limit, but the server may still merge or drop updates when it must.
        case unlimited
        /// Every update, none merged or dropped.
        case unfiltered
        /// `unlimited`, `unfiltered` or the number of updates per second.
        public var description: String {
            switch self {
            case .limited(let f): return "\(f) updates/sec"
            case .unlimited: return "unlimited"
            case .unfiltered: return "unfiltered"
            }
        }
        var wire: RequestedFrequency {
            switch self {
            case .limited(let f): return .limited(f)
            case .unlimited: return .unlimited
            case .unfiltered: return .unfiltered
            }
        }
    }

    /// Whether the subscription asks for the items' snapshot: `yes`, `no`, or (DISTINCT) the
    /// number of past events to receive.
    public enum RequestedSnapshot: Equatable, CustomStringConvertible, Sendable {
        /// The snapshot is asked for.
        case yes
        /// No snapshot.
        case no
        /// The last events, at most this many (DISTINCT mode only).
        case length(Int)
        /// `yes`, `no` or the length.
        public var description: String {
            switch self {
            case .yes: return "yes"
            case .no: return "no"
            case .length(let n): return String(n)
            }
        }
    }

    // MARK: validation

    /// Item names: non-empty, no space, not a number.
    static func isValidItemName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains(" ") && !name.allSatisfy(\.isNumber)
    }

    /// The checks of the request fields, with this API's messages.
    static let rules = SubscriptionRequestRules(
        objectName: "Subscription", isValidItemName: { Subscription.isValidItemName($0) },
        emptyItemList: "Item List is empty", invalidItemName: { "Item name is not valid: '\($0)'" },
        emptyFieldList: "Field List is empty", invalidFieldName: { "Field name is not valid: '\($0)'" },
        emptyItemGroup: "The item group name is empty", emptyFieldSchema: "The field schema name is empty",
        emptyDataAdapter: "The data adapter name is empty", nonPositiveBufferSize: "The buffer size must be greater than zero",
        nonPositiveFrequency: "The frequency must be greater than zero")

    static func checkItems(_ items: [String]) { rules.checkItems(items) }

    static func checkFields(_ fields: [String], mode: Mode) {
        rules.checkFields(fields)
        if mode == .COMMAND {
            precondition(
                fields.contains("command") && fields.contains("key"),
                "A field list for a COMMAND subscription must contain the key and command fields")
        }
    }
}
