import Foundation

/// The figures of all the soak clients added up.
struct SoakTotals {
    var updates = 0
    var stockUpdates = 0
    var lost = 0
    var duplicated = 0
    var lostReportedByServer = 0
    var snapshots = 0
    var sessions = 0
    var recoveryAttempts = 0
    var recovered = 0
    var willRetry = 0
    var connected = 0
    var serverErrors: [Int: Int] = [:]
    var subscriptionErrors: [Int: Int] = [:]

    init(_ clients: [SoakClient]) {
        for c in clients {
            let f = c.probe.snapshot
            updates += f.updates
            stockUpdates += f.stockUpdates
            lost += f.lost
            duplicated += f.duplicated
            lostReportedByServer += f.lostReportedByServer
            snapshots += f.snapshots
            sessions += f.sessions
            recoveryAttempts += f.recoveryAttempts
            recovered += f.recovered
            willRetry += f.willRetry
            if f.connected { connected += 1 }
            for e in f.serverErrors { serverErrors[e, default: 0] += 1 }
            for e in f.subscriptionErrors { subscriptionErrors[e, default: 0] += 1 }
        }
    }
}

/// The final report: one `soak.KEY=VALUE` line per figure on standard output, in insertion
/// order, for scripts/soak.sh to read.
struct SoakReport {
    private var entries: [(String, String)] = []

    mutating func add(_ key: String, _ value: Int) {
        entries.append((key, String(value)))
    }

    /// Error codes with how many times each was seen: `61x3,62x1`, or `none`.
    mutating func add(_ key: String, _ counts: [Int: Int]) {
        let text = counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.key)x\($0.value)" }.joined(separator: ",")
        entries.append((key, text))
    }

    func print() {
        let text = entries.map { "soak.\($0.0)=\($0.1)" }.joined(separator: "\n") + "\n"
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
