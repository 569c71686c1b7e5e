/// One simulated stock of the DEMO adapter set: a random walk around a reference price with
/// a pull back towards it, a bid/ask spread, quantities and the day's min/max.
struct StockQuote: Sendable {
    /// Fictional company names for `item1`…`item30`.
    static let names = [
        "Northwind Metals", "Bluepeak Energy", "Quarry & Co", "Helix Robotics", "Amberline Foods",
        "Corvid Logistics", "Silverleaf Pharma", "Tidewater Shipping", "Granite Bank", "Lumen Optics",
        "Pinecrest Timber", "Orbital Telecom", "Redstone Mining", "Cascade Water", "Vireo Software",
        "Harbor Textiles", "Meridian Airlines", "Foxglove Retail", "Ironclad Security", "Solstice Solar",
        "Kestrel Motors", "Marigold Hotels", "Obsidian Chips", "Willow Insurance", "Summit Cement",
        "Bramble Media", "Nimbus Cloud", "Coral Reef Tourism", "Atlas Freight", "Juniper Biotech",
    ]

    static let fieldNames = [
        "stock_name", "last_price", "time", "pct_change", "bid_quantity", "bid", "ask",
        "ask_quantity", "min", "max", "ref_price", "open_price",
    ]

    let name: String
    let reference: Double
    let open: Double
    private(set) var last: Double
    private(set) var low: Double
    private(set) var high: Double
    private(set) var bid: Double
    private(set) var ask: Double
    private(set) var bidQuantity: Int
    private(set) var askQuantity: Int

    init(name: String, rng: inout SeededGenerator) {
        self.name = name
        reference = Self.cents(Double.random(in: 5...120, using: &rng))
        open = Self.cents(reference * Double.random(in: 0.98...1.02, using: &rng))
        last = open
        low = open
        high = open
        bid = open
        ask = open
        bidQuantity = 0
        askQuantity = 0
        quote(rng: &rng)
    }

    private static func cents(_ v: Double) -> Double { (v * 100).rounded() / 100 }

    /// One price move: at most ±1% plus a small pull towards the reference, kept within
    /// ±40% of it.
    mutating func move(rng: inout SeededGenerator) {
        let noise = Double.random(in: -0.01...0.01, using: &rng)
        let pull = (reference - last) / reference * 0.02
        last = Self.cents(min(max(last * (1 + noise + pull), reference * 0.6), reference * 1.4))
        low = min(low, last)
        high = max(high, last)
        quote(rng: &rng)
    }

    private mutating func quote(rng: inout SeededGenerator) {
        let spread = max(0.01, Self.cents(last * Double.random(in: 0.0005...0.002, using: &rng)))
        bid = Self.cents(last - spread)
        ask = Self.cents(last + spread)
        bidQuantity = 500 * Int.random(in: 1...100, using: &rng)
        askQuantity = 500 * Int.random(in: 1...100, using: &rng)
    }

    var percentChange: Double { (last - reference) / reference * 100 }

    /// Every field (the snapshot).
    func allFields(time: String) -> [String: String?] {
        var f = changingFields(time: time)
        f["stock_name"] = .some(name)
        f["ref_price"] = .some(fixedDecimal(reference, decimals: 2))
        f["open_price"] = .some(fixedDecimal(open, decimals: 2))
        return f
    }

    /// The fields a move can change.
    func changingFields(time: String) -> [String: String?] {
        [
            "last_price": fixedDecimal(last, decimals: 2),
            "time": time,
            "pct_change": fixedDecimal(percentChange, decimals: 2),
            "bid_quantity": String(bidQuantity),
            "bid": fixedDecimal(bid, decimals: 2),
            "ask": fixedDecimal(ask, decimals: 2),
            "ask_quantity": String(askQuantity),
            "min": fixedDecimal(low, decimals: 2),
            "max": fixedDecimal(high, decimals: 2),
        ]
    }
}
