import NIOCore
import TLCP

/// The data notifications of one session, numbered from 1 as docs/protocol/TLCP.md §5.5 counts
/// them, kept while they are undelivered and, once delivered, for the recovery window.
///
/// Lines are stored back to back in pages (UTF-8 bytes, up to `pageBytes`), and each
/// notification is a slot that points into its page. Appending copies the line into the
/// current page and pruning only moves past slots and frees whole pages: there is no
/// allocation or release per notification, and no periodic compaction (which, done for every
/// session at the same count, would make latency jump in step across all of them).
struct NotificationLog: Sendable {
    struct Entry: Sendable {
        var line: String
        var isUpdate: Bool
        var atMillis: Int64
    }

    /// Where one notification is: its page (by number, counting every page ever started),
    /// its UTF-8 range in the page, and what the log needs to know about it.
    private struct Slot: Sendable {
        var page: Int
        var start: Int
        var length: Int
        var isUpdate: Bool
        var atMillis: Int64
    }

    /// A page is closed and a new one started when a line would take it past this size.
    static let pageBytes = 4096

    private var slots = Self.noSlots
    /// Closed pages still holding some slot's line; `pages.first` is page `firstPage`.
    private var pages = Self.noPages

    /// Empty buffers that every new log starts from: a `CircularBuffer` allocates its storage
    /// when made, and a session that never logs a notification (an idle one) would keep two
    /// such allocations, about 110 bytes. Copies share the storage until the first append
    /// gives the log its own.
    private static let noSlots = CircularBuffer<Slot>(initialCapacity: 1)
    private static let noPages = CircularBuffer<[UInt8]>(initialCapacity: 1)
    private var firstPage = 0
    /// The page being filled: page number `firstPage + pages.count`. Bytes rather than a
    /// `String`: appending a line costs a copy instead of a string append (about 350
    /// instructions, Benchmarks/server-callgrind.sh).
    private var current: [UInt8] = []

    /// The progressive of `slots.first`.
    private(set) var firstProgressive = 1
    /// The progressive of the last data notification produced (0 before any).
    private(set) var lastProgressive = 0

    var count: Int { slots.count }
    /// Bytes of the lines held (delivered ones kept for recovery and undelivered ones).
    private(set) var heldBytes = 0

    mutating func append(_ line: String, isUpdate: Bool, now: Int64) -> Int {
        append(.text(line), isUpdate: isUpdate, now: now)
    }

    mutating func append(_ line: DataLine, isUpdate: Bool, now: Int64) -> Int {
        let length = line.byteCount
        if !current.isEmpty && current.count + length > Self.pageBytes {
            pages.append(current)
            current = []
        }
        if current.isEmpty { current.reserveCapacity(min(Self.pageBytes, max(256, length))) }
        let start = current.count
        line.append(to: &current)
        slots.append(Slot(page: firstPage + pages.count, start: start, length: length, isUpdate: isUpdate, atMillis: now))
        heldBytes += length
        lastProgressive += 1
        return lastProgressive
    }

    /// Whether every notification after `progressive` is still held.
    func holdsEverything(after progressive: Int) -> Bool {
        progressive >= firstProgressive - 1 && progressive <= lastProgressive
    }

    func entry(_ progressive: Int) -> Entry? {
        let offset = progressive - firstProgressive
        guard offset >= 0, offset < slots.count else { return nil }
        let slot = slots[slots.index(slots.startIndex, offsetBy: offset)]
        let pageIndex = slot.page - firstPage
        let page = pageIndex < pages.count ? pages[pages.index(pages.startIndex, offsetBy: pageIndex)] : current
        guard slot.start >= 0, slot.length >= 0, slot.start + slot.length <= page.count else { return nil }
        // A string per entry read back: only a rebind or a lost write reads the log.
        let line = String(decoding: page[slot.start..<(slot.start + slot.length)], as: UTF8.self)
        return Entry(line: line, isUpdate: slot.isUpdate, atMillis: slot.atMillis)
    }

    /// Drops delivered entries (progressive ≤ `delivered`) older than the window or beyond the
    /// count limit.
    mutating func prune(delivered: Int, now: Int64, windowMillis: Int, maxCount: Int) {
        var dropped = false
        while let first = slots.first, firstProgressive <= delivered {
            let tooMany = slots.count > maxCount
            let tooOld = Saturating.subtract(now, first.atMillis) > Int64(windowMillis)
            guard tooMany || tooOld else { break }
            heldBytes -= first.length
            slots.removeFirst()
            firstProgressive += 1
            dropped = true
        }
        guard dropped else { return }
        // Free the closed pages no slot points into any more.
        let keepFrom = slots.first?.page ?? (firstPage + pages.count)
        while firstPage < keepFrom, !pages.isEmpty {
            pages.removeFirst()
            firstPage += 1
        }
        if slots.isEmpty {
            // Nothing held: the current page starts over (an idle session keeps no page).
            current = []
            // The next slot's page number must follow the closed ones.
            firstPage += pages.count
            pages.removeAll()
        }
    }

    /// Drops every delivered entry whatever its age: recovery gives way to memory.
    mutating func dropDelivered(_ delivered: Int) {
        prune(delivered: delivered, now: 0, windowMillis: 0, maxCount: 0)
    }
}
