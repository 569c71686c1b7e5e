/// Turns successive `MonitorInputs` into the `MONITOR` items' rows: `server` (MERGE, totals
/// and per-second rates since the previous sample) and the COMMAND items `sessions` (keyed by
/// session id, at most `maxSessionRows`, the oldest first) and `mpn_apps` (keyed
/// `<platform>/<appId>`). No I/O.
struct MonitorSampler: Sendable {
    static let maxSessionRows = 200

    static let serverFields = [
        "sessions", "sessions_ws", "sessions_http", "sessions_unbound", "sessions_created",
        "connections", "subscriptions", "items", "updates_in_per_s", "updates_out_per_s",
        "bytes_out_per_s", "updates_filtered", "updates_lost", "updates_conflated", "sessions_blocked",
        "mpn_devices", "mpn_active", "mpn_triggered", "uptime_s",
    ]

    private var previous: (at: Int64, received: Int, sent: Int, bytes: Int)?
    private let startedAt: Int64

    init(startedAt: Int64) { self.startedAt = startedAt }

    /// The `server` row; rates over the time since the previous call (0 on the first).
    mutating func serverRow(_ inputs: MonitorInputs) -> [String: String?] {
        let c = inputs.counters
        var rates = (received: 0.0, sent: 0.0, bytes: 0.0)
        if let p = previous, inputs.nowMillis > p.at {
            let seconds = Double(inputs.nowMillis - p.at) / 1000
            rates = (
                Double(max(0, inputs.updatesReceived - p.received)) / seconds,
                Double(max(0, c.updatesSent - p.sent)) / seconds,
                Double(max(0, c.bytesSent - p.bytes)) / seconds
            )
        }
        previous = (inputs.nowMillis, inputs.updatesReceived, c.updatesSent, c.bytesSent)
        let ws = inputs.sessions.filter { $0.transport.hasPrefix("WS") }.count
        let http = inputs.sessions.filter { $0.transport.hasPrefix("HTTP") }.count
        var row: [String: String?] = [
            "sessions": String(c.sessionsActive),
            "sessions_ws": String(ws),
            "sessions_http": String(http),
            "sessions_unbound": String(inputs.sessions.count - ws - http),
            "sessions_created": String(c.sessionsCreated),
            "connections": String(c.connectionsOpen),
            "subscriptions": String(c.subscriptionsActive),
            "items": String(inputs.items),
            "updates_in_per_s": Self.rate(rates.received),
            "updates_out_per_s": Self.rate(rates.sent),
            "bytes_out_per_s": Self.rate(rates.bytes),
            "updates_filtered": String(inputs.updatesFiltered),
            "updates_lost": String(c.updatesLost),
            "updates_conflated": String(c.updatesConflated),
            "sessions_blocked": inputs.sessionsBlocked ? "true" : "false",
            "uptime_s": String(max(0, inputs.nowMillis - startedAt) / 1000),
        ]
        let mpn = inputs.mpn
        // Null without the MPN hook (`.some(nil)`: a nil assigned plainly would remove the key).
        row["mpn_devices"] = .some(mpn.map { String($0.devices) })
        row["mpn_active"] = .some(mpn.map { String($0.activeSubscriptions) })
        row["mpn_triggered"] = .some(mpn.map { String($0.triggeredSubscriptions) })
        return row
    }

    static let sessionFields = [
        "key", "command", "user", "address", "adapter_set", "transport", "age_s", "backlog",
        "subscriptions",
    ]

    /// The `sessions` rows by key (without the command field).
    static func sessionRows(_ inputs: MonitorInputs) -> [String: [String: String?]] {
        let shown = inputs.sessions.sorted { ($0.ageMillis, $0.id) > ($1.ageMillis, $1.id) }.prefix(maxSessionRows)
        var rows: [String: [String: String?]] = [:]
        for s in shown {
            rows[s.id] = [
                "key": s.id, "user": s.user, "address": s.address, "adapter_set": s.adapterSet,
                "transport": s.transport, "age_s": String(s.ageMillis / 1000), "backlog": String(s.backlog),
                "subscriptions": String(s.subscriptions),
            ]
        }
        return rows
    }

    static let mpnAppFields = ["key", "command", "platform", "app", "sent", "failed", "suspended"]

    static func mpnAppRows(_ inputs: MonitorInputs) -> [String: [String: String?]] {
        var rows: [String: [String: String?]] = [:]
        for a in (inputs.mpn?.applications ?? []).prefix(100) {
            let key = "\(a.platform)/\(a.appId)"
            rows[key] = [
                "key": key, "platform": a.platform, "app": a.appId, "sent": String(a.sent),
                "failed": String(a.failed), "suspended": a.suspended ? "true" : "false",
            ]
        }
        return rows
    }

    /// COMMAND events turning `old` rows into `new` ones: ADD, UPDATE (changed rows only),
    /// DELETE, keys in order.
    static func commandEvents(old: [String: [String: String?]], new: [String: [String: String?]]) -> [[String: String?]] {
        var events: [[String: String?]] = []
        for key in new.keys.sorted() {
            guard var row = new[key] else { continue }
            if let before = old[key] {
                guard before != row else { continue }
                row["command"] = "UPDATE"
            } else {
                row["command"] = "ADD"
            }
            events.append(row)
        }
        for key in old.keys.sorted() where new[key] == nil {
            events.append(["key": key, "command": "DELETE"])
        }
        return events
    }

    static func rate(_ d: Double) -> String {
        guard d.isFinite, d >= 0 else { return "0.0" }
        return d >= 1e15 ? "1000000000000000" : d < 100 ? String((d * 10).rounded() / 10) : String(Int(d.rounded()))
    }
}
