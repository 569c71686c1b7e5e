import TLCP

/// The data notifications of one session, numbered from 1 as section 5.5 counts them, kept
/// while they are undelivered and, once delivered, for the recovery window.
struct NotificationLog: Sendable {
    struct Entry: Sendable {
        var line: String
        var isUpdate: Bool
        var atMillis: Int64
    }

    /// Entries, the first one having progressive `firstProgressive`.
    private var entries: [Entry] = []
    private var head = 0
    /// The progressive of `entries[head]`.
    private(set) var firstProgressive = 1
    /// The progressive of the last data notification produced (0 before any).
    private(set) var lastProgressive = 0

    var count: Int { entries.count - head }
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
        let i = head + (progressive - firstProgressive)
        guard progressive >= firstProgressive, i < entries.count else { return nil }
        return entries[i]
    }

    /// Drops delivered entries (progressive ≤ `delivered`) older than the window or beyond the
    /// count limit.
    mutating func prune(delivered: Int, now: Int64, windowMillis: Int, maxCount: Int) {
        while head < entries.count, firstProgressive <= delivered {
            let tooMany = count > maxCount
            let tooOld = Saturating.subtract(now, entries[head].atMillis) > Int64(windowMillis)
            guard tooMany || tooOld else { break }
            heldBytes -= entries[head].line.utf8.count
            entries[head].line = ""
            head += 1
            firstProgressive += 1
        }
        compact()
    }

    /// Drops every delivered entry whatever its age: recovery gives way to memory.
    mutating func dropDelivered(_ delivered: Int) {
        prune(delivered: delivered, now: 0, windowMillis: 0, maxCount: 0)
    }

    private mutating func compact() {
        if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
