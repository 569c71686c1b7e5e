import NIOConcurrencyHelpers

/// A Data Adapter defined by data alone (usually the configuration file): a load-test style
/// simulator. Each declared item has a behaviour:
/// - `staticValues`: a snapshot, then nothing;
/// - `counter`: N updates/s; counter fields go up by `step`, constant fields never change;
/// - `randomWalk`: N updates/s; each walk field moves by a random amount within `step`,
///   kept within `min`…`max` and printed with `decimals` digits;
/// - `commandTable`: a COMMAND item (`key`, `command` fields) with initial rows; optionally N
///   changes/s that update numeric `updateFields` of a random row and, with `churn`, delete and
///   re-add rows.
/// Every item sends a snapshot (its current state, then end-of-snapshot) on subscribe. Values
/// persist across unsubscribe/subscribe; timers run only while an item is subscribed.
/// Randomness is seeded, so a run repeats exactly under a `ManualEngineClock`.
public final class SimulatedDataAdapter: DataAdapter {
    /// What a simulated item does (see the type's description).
    public enum Behavior: Sendable, Hashable {
        /// Fixed values: a snapshot, then no updates.
        case staticValues([String: String?])
        /// Counter fields that go up at a fixed rate.
        case counter(Counter)
        /// Numeric fields that move at random within bounds.
        case randomWalk(RandomWalk)
        /// A COMMAND table of rows.
        case commandTable(CommandTable)
    }

    /// A counter item's settings.
    public struct Counter: Sendable, Hashable {
        /// Updates per second while the item is subscribed.
        public var updatesPerSecond: Double
        /// The fields that count.
        public var counterFields: [String]
        /// Fields in the snapshot that never change.
        public var constantFields: [String: String?]
        /// The counter fields' first value.
        public var start: Int
        /// What each update adds to the counter fields.
        public var step: Int

        /// A counter with its settings.
        public init(
            updatesPerSecond: Double, counterFields: [String], constantFields: [String: String?] = [:],
            start: Int = 0, step: Int = 1
        ) {
            self.updatesPerSecond = updatesPerSecond
            self.counterFields = counterFields
            self.constantFields = constantFields
            self.start = start
            self.step = step
        }
    }

    /// One field of a random walk.
    public struct WalkField: Sendable, Hashable {
        /// The first value.
        public var start: Double
        /// The largest move of one update, either way.
        public var step: Double
        /// The lowest value the field may take.
        public var min: Double
        /// The highest value the field may take.
        public var max: Double
        /// Digits after the decimal point in the field's text.
        public var decimals: Int

        /// A walk field with its settings.
        public init(start: Double, step: Double, min: Double, max: Double, decimals: Int = 2) {
            self.start = start
            self.step = step
            self.min = min
            self.max = max
            self.decimals = decimals
        }
    }

    /// A random-walk item's settings.
    public struct RandomWalk: Sendable, Hashable {
        /// Updates per second while the item is subscribed.
        public var updatesPerSecond: Double
        /// The fields that walk, by name.
        public var fields: [String: WalkField]
        /// Fields in the snapshot that never change.
        public var constantFields: [String: String?]

        /// A random walk with its settings.
        public init(updatesPerSecond: Double, fields: [String: WalkField], constantFields: [String: String?] = [:]) {
            self.updatesPerSecond = updatesPerSecond
            self.fields = fields
            self.constantFields = constantFields
        }
    }

    /// A COMMAND item's settings: its rows and how they change.
    public struct CommandTable: Sendable, Hashable {
        /// Initial rows; each has a `key` (the `command` field is added by the adapter).
        public var rows: [[String: String?]]
        /// Changes per second (0: the table never changes).
        public var updatesPerSecond: Double
        /// Numeric fields an UPDATE changes.
        public var updateFields: [String]
        /// Whether changes also delete rows and add them back.
        public var churn: Bool

        /// A table with its settings.
        public init(rows: [[String: String?]], updatesPerSecond: Double = 0, updateFields: [String] = [], churn: Bool = false) {
            self.rows = rows
            self.updatesPerSecond = updatesPerSecond
            self.updateFields = updateFields
            self.churn = churn
        }
    }

    private let behaviors: [String: Behavior]
    private let seed: UInt64
    private let ticker: ItemTicker
    private let listener = NIOLockedValueBox<(any ItemEventListener)?>(nil)
    private let states = NIOLockedValueBox<[String: SimulatedItemState]>([:])

    /// An adapter serving the declared items.
    ///
    /// - Parameters:
    ///   - items: item name → behaviour.
    ///   - clock: the time source of the items' ticks.
    ///   - seed: the random seed: the same seed gives the same values in the same order.
    public init(items: [String: Behavior], clock: any EngineClock = SystemEngineClock(), seed: UInt64 = 1) {
        self.behaviors = items
        self.seed = seed
        self.ticker = ItemTicker(clock: clock)
    }

    /// The declared item names.
    public var itemNames: [String] { behaviors.keys.sorted() }

    /// Keeps the listener the items' events go to.
    public func setListener(_ listener: any ItemEventListener) {
        self.listener.withLockedValue { $0 = listener }
    }

    /// True for declared items: each sends its current state as its snapshot.
    public func isSnapshotAvailable(item: String) -> Bool {
        behaviors[item] != nil
    }

    /// Sends the item's snapshot, then starts its timer (if it changes at all). An item not
    /// declared is refused with `DataAdapterError.subscription`.
    public func subscribe(item: String) async throws {
        guard let behavior = behaviors[item] else {
            throw DataAdapterError.subscription("Item \(item) is not defined in this adapter")
        }
        let snapshot = states.withLockedValue { s -> [[String: String?]] in
            let state = s[item] ?? SimulatedItemState(behavior: behavior, rng: SeededGenerator(seed: seed, name: item))
            s[item] = state
            return state.snapshot(behavior)
        }
        if let l = listener.withLockedValue({ $0 }) {
            for fields in snapshot { l.update(item: item, fields: fields, isSnapshot: true) }
            l.endOfSnapshot(item: item)
        }
        let rate = behavior.updatesPerSecond
        guard rate > 0 else { return }
        let period = nanosecondsPerEvent(rate)
        ticker.start(item, firstDelay: period) { [weak self] in
            self?.tick(item, behavior: behavior) == true ? period : nil
        }
    }

    /// Stops the item's timer; its values are kept for the next subscription.
    public func unsubscribe(item: String) async {
        ticker.stop(item)
    }

    /// One step of an item; false when the item is gone.
    private func tick(_ item: String, behavior: Behavior) -> Bool {
        let event = states.withLockedValue { s -> [String: String?]? in
            s[item]?.step(behavior)
        }
        guard let event else { return false }
        if let l = listener.withLockedValue({ $0 }), !event.isEmpty {
            l.update(item: item, fields: event, isSnapshot: false)
        }
        return true
    }
}

extension SimulatedDataAdapter.Behavior {
    var updatesPerSecond: Double {
        switch self {
        case .staticValues: return 0
        case .counter(let c): return c.updatesPerSecond
        case .randomWalk(let w): return w.updatesPerSecond
        case .commandTable(let t): return t.updatesPerSecond
        }
    }
}
