import NIOCore
import TLCP

/// The data notifications of one session, numbered from 1 as docs/protocol/TLCP.md §5.5 counts
/// them, kept while they are undelivered and, once delivered, for the recovery window.
///
/// The entries are a ring buffer: each pruned entry is freed as it leaves, so there is no
/// periodic compaction (which, done for every session at the same count, made latency jump
/// in step across all of them).
struct NotificationLog: Sendable {
    struct Entry: Sendable {
        var line: String
        var isUpdate: Bool
        var atMillis: Int64
    }

    /// Entries, the first one having progressive `firstProgressive`.
    private var entries = CircularBuffer<Entry>(initialCapacity: 1)
    /// The progressive of `entries.first`.
    private(set) var firstProgressive = 1
    /// The progressive of the last data notification produced (0 before any).
    private(set) var lastProgressive = 0

    var count: Int { entries.count }
    /// Bytes of the lines held (delivered ones kept for recovery and undelivered ones).
    private(set) var heldBytes = 0

    mutating func append(_ line: String, isUpdate: Bool, now: Int64) -> Int {
        heldBytes += line.utf8.count
        entries.append(Entry(line: line, isUpdate: isUpdate, atMillis: now))
        lastProgressive += 1
        return lastProgressive
    }

    /// Whether every notification after `progressive` is still held.
    func holdsEverything(after progressive: Int) -> Bool {
        progressive >= firstProgressive - 1 && progressive <= lastProgressive
    }

    func entry(_ progressive: Int) -> Entry? {
        let offset = progressive - firstProgressive
        guard offset >= 0, offset < entries.count else { return nil }
        return entries[entries.index(entries.startIndex, offsetBy: offset)]
    }

    /// Drops delivered entries (progressive ≤ `delivered`) older than the window or beyond the
    /// count limit.
    mutating func prune(delivered: Int, now: Int64, windowMillis: Int, maxCount: Int) {
        while let first = entries.first, firstProgressive <= delivered {
            let tooMany = entries.count > maxCount
            let tooOld = Saturating.subtract(now, first.atMillis) > Int64(windowMillis)
            guard tooMany || tooOld else { break }
            heldBytes -= first.line.utf8.count
            entries.removeFirst()
            firstProgressive += 1
        }
    }

    /// Drops every delivered entry whatever its age: recovery gives way to memory.
    mutating func dropDelivered(_ delivered: Int) {
        prune(delivered: delivered, now: 0, windowMillis: 0, maxCount: 0)
    }
}
