import NIOConcurrencyHelpers

/// The DEMO data adapter (see `DemoAdapters`). State lives behind one lock; events are sent to
/// the listener after the lock is released. Timers run only for subscribed items.
public final class DemoDataAdapter: DataAdapter {
    static let portfolioItem = "portfolio1"
    static let chatItem = "chat_room"
    static let counterItem = "counter"

    private struct State: Sendable {
        var rng: SeededGenerator
        var stocks: [StockQuote]
        var count = 0
        var chat: [[String: String?]] = []
        var chatSubscribed = false
        /// `portfolio1`: key → quantity, in the order the keys were added.
        var holdings: [(key: String, qty: Int)] = []
    }

    private let options: DemoAdapters.Options
    private let ticker: ItemTicker
    private let state: NIOLockedValueBox<State>
    private let listener = NIOLockedValueBox<(any ItemEventListener)?>(nil)

    init(options: DemoAdapters.Options, clock: any EngineClock) {
        self.options = options
        self.ticker = ItemTicker(clock: clock)
        var rng = SeededGenerator(seed: options.seed)
        let stocks = StockQuote.names.map { StockQuote(name: $0, rng: &rng) }
        var initial = State(rng: rng, stocks: stocks)
        initial.holdings = [("item1", 300), ("item7", 1200), ("item12", 500)]
        self.state = NIOLockedValueBox(initial)
    }

    /// The stock index (0-based) for `item1`…`item30`.
    static func stockIndex(_ item: String) -> Int? {
        guard item.hasPrefix("item"), let n = Int(item.dropFirst(4)), String(n) == item.dropFirst(4),
            (1...DemoAdapters.stockItemCount).contains(n)
        else { return nil }
        return n - 1
    }

    private var now: String { clockText(secondsSinceEpoch: options.secondsSinceEpoch()) }

    private func emit(_ item: String, _ events: [[String: String?]], snapshot: Bool, endOfSnapshot: Bool = false) {
        guard let l = listener.withLockedValue({ $0 }) else { return }
        if events.count == 1 {
            l.update(item: item, fields: events[0], isSnapshot: snapshot)
        } else {
            // A snapshot of several rows (the portfolio's) reaches the sessions in one write.
            l.update(events.map { ItemUpdateEvent(item: item, fields: $0, isSnapshot: snapshot) })
        }
        if endOfSnapshot { l.endOfSnapshot(item: item) }
    }

    /// Keeps the listener the items' events go to.
    public func setListener(_ listener: any ItemEventListener) {
        self.listener.withLockedValue { $0 = listener }
    }

    /// Whether the adapter sends the item's snapshot itself.
    public func isSnapshotAvailable(item: String) -> Bool {
        Self.stockIndex(item) != nil || [Self.portfolioItem, Self.chatItem, Self.counterItem].contains(item)
    }

    /// Starts the item (sends its snapshot, then its updates); an unknown item is refused.
    public func subscribe(item: String) async throws {
        let time = now
        if let i = Self.stockIndex(item) {
            let snapshot = state.withLockedValue { $0.stocks[i].allFields(time: time) }
            emit(item, [snapshot], snapshot: true, endOfSnapshot: true)
            start(item, rate: options.stockUpdatesPerSecond, jitter: true) { [weak self] in self?.moveStock(i) }
            return
        }
        switch item {
        case Self.counterItem:
            let count = state.withLockedValue { $0.count }
            emit(item, [["count": String(count)]], snapshot: true, endOfSnapshot: true)
            start(item, rate: options.counterUpdatesPerSecond, jitter: false) { [weak self] in self?.countUp() }
        case Self.portfolioItem:
            let rows = state.withLockedValue { s in
                s.holdings.map { self.portfolioRow(s, key: $0.key, qty: $0.qty, command: "ADD") }
            }
            emit(item, rows, snapshot: true, endOfSnapshot: true)
            start(item, rate: options.portfolioChangesPerSecond, jitter: true) { [weak self] in self?.trade() }
        case Self.chatItem:
            let history = state.withLockedValue { s in
                s.chatSubscribed = true
                return s.chat
            }
            emit(item, history, snapshot: true, endOfSnapshot: true)
        default:
            throw DataAdapterError.subscription("No item \(item) in the DEMO adapter set")
        }
    }

    /// Stops the item's updates.
    public func unsubscribe(item: String) async {
        ticker.stop(item)
        if item == Self.chatItem { state.withLockedValue { $0.chatSubscribed = false } }
    }

    /// Adds a chat message (from the metadata adapter) and sends it if `chat_room` is subscribed.
    func postChat(_ text: String, nick: String, ip: String?) {
        let fields: [String: String?] = ["message": text, "timestamp": now, "IP": ip, "nick": nick]
        let send = state.withLockedValue { s -> Bool in
            s.chat.append(fields)
            let keep = max(0, options.chatHistoryLength)
            if s.chat.count > keep { s.chat.removeFirst(s.chat.count - keep) }
            return s.chatSubscribed
        }
        if send { emit(Self.chatItem, [fields], snapshot: false) }
    }

    // MARK: - Ticks

    private func start(
        _ item: String, rate: Double, jitter: Bool,
        _ step: @escaping @Sendable () -> Void
    ) {
        guard rate > 0 else { return }
        let period = nanosecondsPerEvent(rate)
        let first = jitter ? jittered(period) : period
        ticker.start(item, firstDelay: first) { [weak self] in
            guard let self else { return nil }
            step()
            return jitter ? self.jittered(period) : period
        }
    }

    /// `period` × a random factor in 0.5…1.5.
    private func jittered(_ period: UInt64) -> UInt64 {
        let factor = state.withLockedValue { Double.random(in: 0.5...1.5, using: &$0.rng) }
        return max(1, UInt64(Double(period) * factor))
    }

    private func moveStock(_ i: Int) {
        let time = now
        let fields = state.withLockedValue { s -> [String: String?] in
            s.stocks[i].move(rng: &s.rng)
            return s.stocks[i].changingFields(time: time)
        }
        emit("item\(i + 1)", [fields], snapshot: false)
    }

    private func countUp() {
        let count = state.withLockedValue { s -> Int in
            s.count += 1
            return s.count
        }
        emit(Self.counterItem, [["count": String(count)]], snapshot: false)
    }

    /// One buy or sell in `portfolio1`.
    private func trade() {
        let row = state.withLockedValue { s -> [String: String?] in
            let lots = 100 * Int.random(in: 1...10, using: &s.rng)
            let sell = !s.holdings.isEmpty && Bool.random(using: &s.rng)
            if sell {
                let i = Int.random(in: 0..<s.holdings.count, using: &s.rng)
                let (key, qty) = s.holdings[i]
                if qty <= lots {
                    s.holdings.remove(at: i)
                    return [ItemState.keyField: key, ItemState.commandField: "DELETE", "qty": nil, "price": nil]
                }
                s.holdings[i].qty = qty - lots
                return portfolioRow(s, key: key, qty: qty - lots, command: "UPDATE")
            }
            let key = "item\(Int.random(in: 1...DemoAdapters.stockItemCount, using: &s.rng))"
            if let i = s.holdings.firstIndex(where: { $0.key == key }) {
                s.holdings[i].qty += lots
                return portfolioRow(s, key: key, qty: s.holdings[i].qty, command: "UPDATE")
            }
            s.holdings.append((key, lots))
            return portfolioRow(s, key: key, qty: lots, command: "ADD")
        }
        emit(Self.portfolioItem, [row], snapshot: false)
    }

    private func portfolioRow(_ s: State, key: String, qty: Int, command: String) -> [String: String?] {
        let price = Self.stockIndex(key).map { fixedDecimal(s.stocks[$0].last, decimals: 2) }
        return [ItemState.keyField: key, ItemState.commandField: command, "qty": String(qty), "price": price]
    }
}
