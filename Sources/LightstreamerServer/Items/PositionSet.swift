/// A set of 0-based item positions of one subscription, kept in the subscription's record
/// itself for the first 64 positions: the fan-out reads a flag of every subscriber per update,
/// and a flag inside each `SubscribedItem` cost a cache miss per session per update (its
/// array's buffer), about a third of the producer's time with 1,000 sessions
/// (BENCHMARKS.md, "Flags in the subscription's record").
struct PositionSet: Sendable, Equatable {
    /// Positions 0 to 63.
    private var low: UInt64 = 0
    /// Positions from 64, 64 per word; empty while none was ever inserted.
    private var high: [UInt64] = []

    subscript(position: Int) -> Bool {
        get {
            if position >= 0 && position < 64 { return low & (1 &<< UInt64(position)) != 0 }
            guard position >= 64 else { return false }
            let word = (position >> 6) - 1
            return word < high.count && high[word] & (1 &<< UInt64(position & 63)) != 0
        }
        set {
            guard position >= 0 else { return }
            if position < 64 {
                let bit: UInt64 = 1 &<< UInt64(position)
                if newValue { low |= bit } else { low &= ~bit }
                return
            }
            let word = (position >> 6) - 1
            let bit: UInt64 = 1 &<< UInt64(position & 63)
            if word >= high.count {
                guard newValue else { return }
                high.append(contentsOf: repeatElement(0, count: word - high.count + 1))
            }
            if newValue { high[word] |= bit } else { high[word] &= ~bit }
        }
    }

    var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }
}
