import TLCP

/// What the administrator sees of the MPN Module and may change (docs/ADMIN.md): notifications
/// sent and failed per application, applications whose deliveries are suspended.
struct MPNAdminState: Sendable {
    struct Counts: Sendable, Hashable {
        var sent = 0
        var failed = 0
    }

    /// At most this many applications are counted (others are not shown).
    static let maxApplications = 100

    var counts: [String: Counts] = [:]
    var suspended: Set<String> = []
    /// TRIGGERED subscriptions in the store, and when they were last counted (wall-clock ms).
    var triggered = 0
    var triggeredCountedAt: Int64?

    static func key(_ platform: MPNPlatform, _ appId: String) -> String { "\(platform.rawValue)/\(appId)" }

    mutating func count(_ platform: MPNPlatform, _ appId: String, sent: Bool) {
        let key = Self.key(platform, appId)
        guard counts[key] != nil || counts.count < Self.maxApplications else { return }
        if sent { counts[key, default: Counts()].sent += 1 } else { counts[key, default: Counts()].failed += 1 }
    }

    func isSuspended(_ platform: MPNPlatform, _ appId: String) -> Bool { suspended.contains(Self.key(platform, appId)) }
}
