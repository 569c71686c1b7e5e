import NIOConcurrencyHelpers

/// Open connections, in all and per client address, against their bounds: a connection beyond
/// either is closed as soon as it is accepted, and each admitted one is counted down when it
/// closes. Shared by every event loop of a listener.
final class ConnectionLimiter: Sendable {
    private struct Counts {
        var total = 0
        var perAddress: [String: Int] = [:]
    }

    let maxConnections: Int
    let maxPerAddress: Int
    private let counts = NIOLockedValueBox(Counts())

    init(maxConnections: Int, maxPerAddress: Int) {
        self.maxConnections = maxConnections
        self.maxPerAddress = maxPerAddress
    }

    /// Counts a new connection from `address` in, or says it is one too many.
    func admit(_ address: String) -> Bool {
        counts.withLockedValue { c in
            let mine = c.perAddress[address, default: 0]
            guard c.total < maxConnections, mine < maxPerAddress else { return false }
            c.total += 1
            c.perAddress[address] = mine + 1
            return true
        }
    }

    /// Counts an admitted connection out.
    func release(_ address: String) {
        counts.withLockedValue { c in
            c.total = max(c.total - 1, 0)
            let mine = c.perAddress[address, default: 0] - 1
            c.perAddress[address] = mine > 0 ? mine : nil
        }
    }

    var open: Int { counts.withLockedValue { $0.total } }
}
