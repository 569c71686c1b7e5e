import Foundation

/// The built-in `DEMO` adapter set:
/// - `item1`…`item30`: stock quotes (MERGE; also DISTINCT/RAW) with the fields
///   `stock_name last_price time pct_change bid_quantity bid ask ask_quantity min max ref_price open_price`;
/// - `portfolio1`: a COMMAND table (`key command qty price`) whose rows are bought and sold;
/// - `chat_room`: DISTINCT messages (`message timestamp IP nick`) fed by client messages
///   `CHAT|<text>`;
/// - `counter`: MERGE field `count`, +1 at a fixed rate.
/// All in the `DEFAULT` data adapter; the metadata adapter is literal-based (space-separated
/// names). A login as user `refused` is refused with code -2 (for tests of CONERR).
public enum DemoAdapters {
    /// The adapter set's name.
    public static let adapterSetName = "DEMO"
    /// Stock items `item1`…`item30`.
    public static let stockItemCount = 30
    /// The code a refused login gets (`CONERR`).
    public static let refusedLoginCode = -2

    /// Rates, sizes and hooks of the demo data.
    public struct Options: Sendable {
        /// Average updates per second of each stock (each interval varies ±50%).
        public var stockUpdatesPerSecond: Double
        /// Updates per second of the `counter` item.
        public var counterUpdatesPerSecond: Double
        /// Buys/sells per second in `portfolio1` (0: the portfolio never changes).
        public var portfolioChangesPerSecond: Double
        /// Chat messages kept for the `chat_room` snapshot.
        public var chatHistoryLength: Int
        /// The random seed of the stock quotes and the portfolio.
        public var seed: UInt64
        /// Wall-clock seconds since 1970, for the `time`/`timestamp` fields (UTC `HH:mm:ss`).
        public var secondsSinceEpoch: @Sendable () -> Int
        /// The user name whose login is refused (nil: everybody may log in).
        public var refusedUser: String?

        /// Options with the defaults of the demo server.
        public init(
            stockUpdatesPerSecond: Double = 2, counterUpdatesPerSecond: Double = 10,
            portfolioChangesPerSecond: Double = 0.5, chatHistoryLength: Int = 20, seed: UInt64 = 7,
            secondsSinceEpoch: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) },
            refusedUser: String? = "refused"
        ) {
            self.stockUpdatesPerSecond = stockUpdatesPerSecond
            self.counterUpdatesPerSecond = counterUpdatesPerSecond
            self.portfolioChangesPerSecond = portfolioChangesPerSecond
            self.chatHistoryLength = chatHistoryLength
            self.seed = seed
            self.secondsSinceEpoch = secondsSinceEpoch
            self.refusedUser = refusedUser
        }
    }

    /// The `DEMO` adapter set, its timers on `clock`.
    public static func makeDemoAdapterSet(
        options: Options = Options(),
        clock: any EngineClock = SystemEngineClock()
    ) -> AdapterSet {
        let data = DemoDataAdapter(options: options, clock: clock)
        let metadata = DemoMetadataAdapter(data: data, options: options)
        return AdapterSet(
            name: adapterSetName, metadata: metadata,
            dataAdapters: [AdapterSet.defaultDataAdapterName: data])
    }
}
