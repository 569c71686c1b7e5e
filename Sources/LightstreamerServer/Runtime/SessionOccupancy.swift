import TLCP

/// Live sessions and creates in progress, in all and per client address, against the
/// `maxSessions` and `maxSessionsPerAddress` limits (CONERR 8 beyond either).
struct SessionOccupancy: Sendable {
    private(set) var total = 0
    private(set) var byAddress: [String: Int] = [:]

    /// Takes a place for a create from `address`, or says why not.
    mutating func reserve(address: String?, settings: SessionSettings) -> SessionRefusal? {
        if let limit = settings.maxSessions, total >= limit {
            return SessionRefusal(code: 8, message: "Configured limit of active sessions reached")
        }
        if let address, let limit = settings.maxSessionsPerAddress, byAddress[address, default: 0] >= limit {
            return SessionRefusal(code: 8, message: "Configured limit of active sessions from one address reached")
        }
        total += 1
        if let address { byAddress[address, default: 0] += 1 }
        return nil
    }

    /// Gives back the place of a session (or of a create that failed) from `address`.
    mutating func release(address: String?) {
        total = max(total - 1, 0)
        guard let address, let n = byAddress[address] else { return }
        byAddress[address] = n > 1 ? n - 1 : nil
    }
}
