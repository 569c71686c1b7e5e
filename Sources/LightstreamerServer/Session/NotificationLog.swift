import NIOCore
import TLCP

/// The data notifications of one session, numbered from 1 as docs/protocol/TLCP.md §5.5 counts
/// them, kept while they are undelivered and, once delivered, for the recovery window.
///
/// Lines are stored back to back, each followed by its CR-LF, in pages (`LogPage`, up to
/// `pageBytes`), and each notification is a slot that points into its page. Appending copies the
/// line into the current page and pruning only moves past slots and frees whole pages: there is
/// no allocation or release per notification, and no periodic compaction (which, done for every
/// session at the same count, would make latency jump in step across all of them). The output
/// writes a line from its page (`span(of:)`) rather than from a second copy of its own.
struct NotificationLog: Sendable {
    struct Entry: Sendable {
        var line: String
        var isUpdate: Bool
        var atMillis: Int64
    }

    /// Where one notification is: its page, where its line starts in the page and its length
    /// without the CR-LF, and what the log needs to know about it. 16 bytes (it was 40, then
    /// 32): a session keeps one per notification of its recovery window, about as many bytes
    /// as the lines themselves, and a session whose client stopped reading keeps those of
    /// everything the kernel took (BENCHMARKS.md, "An idle session's objects in smaller size
    /// classes; the recovery log's slots in 16 bytes").
    /// - the page is numbered modulo 2^32 (far fewer pages are ever held at once);
    /// - a line starts within its page's first 4 KiB, or at 0 in a page of its own, so the
    ///   start leaves the top bit for whether the line is an update;
    /// - the time is in milliseconds after the log's `baseMillis`, in 32 bits (`rebase`).
    private struct Slot: Sendable {
        var atMillis: Int32
        /// Lines longer than 4 GiB are not held (`append`).
        var length: UInt32
        var page: UInt32
        var startAndKind: UInt32

        init(atMillis: Int32, length: UInt32, page: UInt32, start: Int, isUpdate: Bool) {
            self.atMillis = atMillis
            self.length = length
            self.page = page
            startAndKind = UInt32(truncatingIfNeeded: start) & 0x7FFF_FFFF | (isUpdate ? 0x8000_0000 : 0)
        }

        var start: Int { Int(startAndKind & 0x7FFF_FFFF) }
        var isUpdate: Bool { startAndKind & 0x8000_0000 != 0 }
    }

    /// Slots the log's ring has room for (for tests).
    var slotCapacity: Int { slots.capacity }

    /// The bytes one held notification's slot takes in the log's ring (for tests).
    static var slotBytes: Int { MemoryLayout<Slot>.stride }

    /// What the slots' times count from: the time of the first line logged into an empty log,
    /// moved on (`rebase`) when a line's time is more than 2^31 ms (24 days) from it.
    private var baseMillis: Int64 = 0

    /// The time of `slot`, in the monotonic milliseconds the log was given.
    private func millis(of slot: Slot) -> Int64 { Saturating.add(baseMillis, Int64(slot.atMillis)) }

    /// Counts the slots' times from `now`: those more than 2^31 ms before it keep the earliest
    /// time that fits (they are out of any recovery window a session keeps that long).
    private mutating func rebase(to now: Int64) {
        // Bounded, so that adding it to a 32-bit time cannot overflow.
        let shift = Saturating.clamp(Saturating.subtract(baseMillis, now), to: -(1 << 40)...(1 << 40))
        slots.modifyEach { $0.atMillis = Int32(clamping: Int64($0.atMillis) + shift) }
        baseMillis = now
    }

    /// `slot`'s page as an index into `pages` (`pages.count`: the current page).
    private func pageIndex(of slot: Slot) -> Int {
        Int(slot.page &- UInt32(truncatingIfNeeded: firstPage))
    }

    /// A page is closed and a new one started when a line would take it past this size (a
    /// longer line gets a page of its own size).
    static let pageBytes = 4096
    /// The first page of a log that holds nothing: a session with little traffic keeps a small
    /// page; each new page doubles up to `pageBytes`.
    static let firstPageBytes = 512

    /// One per notification held, oldest first (a session that never logs one, an idle one,
    /// allocates none).
    private var slots = PlainRing<Slot>()
    /// Closed pages still holding some slot's line; `pages.first` is page `firstPage`.
    private var pages = Self.noPages

    /// The empty buffer that every new log starts from: a `CircularBuffer` allocates its
    /// storage when made, and a session that never logs a notification (an idle one) would keep
    /// such an allocation. Copies share the storage until the first page closes.
    private static let noPages = CircularBuffer<LogPage>(initialCapacity: 1)
    private var firstPage = 0
    /// The page being filled: page number `firstPage + pages.count` (nil: none yet, or the log
    /// emptied and gave it up).
    private var current: LogPage?

    /// The progressive of `slots.first`.
    private(set) var firstProgressive = 1
    /// The progressive of the last data notification produced (0 before any).
    private(set) var lastProgressive = 0

    var count: Int { slots.count }
    /// Bytes of the lines held, without their line ends (delivered ones kept for recovery and
    /// undelivered ones).
    private(set) var heldBytes = 0

    mutating func append(_ line: String, isUpdate: Bool, now: Int64) -> Int {
        append(.text(line), isUpdate: isUpdate, now: now)
    }

    mutating func append(_ line: DataLine, isUpdate: Bool, now: Int64) -> Int {
        // The current page is used through the optional, which borrows it: a page returned
        // by a helper was retained and released for every line. The line's exact length is
        // counted only when the page may not hold its longest form.
        if (current?.free ?? -1) < line.maxByteCount + 2 {
            let needed = line.byteCount + 2
            if (current?.free ?? -1) < needed { startPage(for: needed) }
        }
        let (start, length) = current?.append(line) ?? (0, 0)
        var offset = Saturating.subtract(now, baseMillis)
        if slots.isEmpty {
            baseMillis = now
            offset = 0
        } else if Int64(Int32(truncatingIfNeeded: offset)) != offset {
            rebase(to: now)
            offset = 0
        }
        // A length past 32 bits makes the slot's line one `locate` does not find.
        let stored = UInt32(clamping: length)
        slots.append(
            Slot(
                atMillis: Int32(truncatingIfNeeded: offset), length: stored,
                page: UInt32(truncatingIfNeeded: firstPage + pages.count), start: start, isUpdate: isUpdate))
        heldBytes += Int(stored)
        lastProgressive += 1
        return lastProgressive
    }

    /// Closes the current page (if any) and starts one with room for `bytes`.
    private mutating func startPage(for bytes: Int) {
        var capacity = Self.firstPageBytes
        if let full = current {
            pages.append(full)
            capacity = min(Self.pageBytes, full.capacity * 2)
        } else if let last = pages.last {
            capacity = min(Self.pageBytes, last.capacity * 2)
        }
        current = LogPage(capacity: max(capacity, bytes))
    }

    /// Whether every notification after `progressive` is still held.
    func holdsEverything(after progressive: Int) -> Bool {
        progressive >= firstProgressive - 1 && progressive <= lastProgressive
    }

    /// Where a held notification is: its line with the CR-LF (`span(of:)`), and its length
    /// without it. Plain values: an optional that held the page itself was destroyed through
    /// generic witnesses, some 400 instructions per line (Benchmarks/server-callgrind.sh).
    struct Location: Equatable {
        fileprivate var pageIndex: Int
        var start: Int
        var length: Int
        var isUpdate: Bool
        var atMillis: Int64
    }

    /// Where the held notification `progressive` is, or nil if it is not held.
    func locate(_ progressive: Int) -> Location? {
        let offset = progressive - firstProgressive
        guard offset >= 0, offset < slots.count else { return nil }
        let slot = slots[offset]
        let pageIndex = pageIndex(of: slot)
        let start = slot.start
        let length = Int(slot.length)
        guard pageIndex <= pages.count, start + length + 2 <= page(pageIndex)?.count ?? 0 else { return nil }
        return Location(pageIndex: pageIndex, start: start, length: length, isUpdate: slot.isUpdate, atMillis: millis(of: slot))
    }

    /// Consecutive held notifications that lie back to back in one page, from the first after
    /// `progressive`: their lines with their CR-LFs as one span, how many they are, and how
    /// many of them are updates (`U`).
    struct Run {
        var span: LogPage.Span
        var lines: Int
        var updates: Int
    }

    /// The run that starts with the notification after `progressive` (see `Run`), of at most
    /// `maxLines`, and of at most `maxBytes` with the line ends (no line at all when the first
    /// is longer). Nil if that notification is not held. Walks the slots in order from there:
    /// finding each line on its own (`locate`, `span(of:)`) cost some 150 instructions per
    /// line, with a retain and a release of its page (Benchmarks/server-callgrind.sh).
    func run(after progressive: Int, maxBytes: Int = .max, maxLines: Int = .max) -> Run? {
        let offset = progressive + 1 - firstProgressive
        guard offset >= 0, offset < slots.count else { return nil }
        var i = offset
        let first = slots[i]
        let start = first.start
        let firstLength = Int(first.length)
        guard let page = page(pageIndex(of: first)) else { return nil }
        guard firstLength + 2 <= maxBytes else {
            return Run(span: LogPage.Span(page: page, start: start, end: start), lines: 0, updates: 0)
        }
        var end = start + firstLength + 2
        var lines = 1
        var updates = first.isUpdate ? 1 : 0
        i += 1
        while i < slots.count, lines < maxLines {
            let next = slots[i]
            let nextLength = Int(next.length)
            guard next.page == first.page, next.start == end, end - start + nextLength + 2 <= maxBytes else { break }
            end += nextLength + 2
            lines += 1
            if next.isUpdate { updates += 1 }
            i += 1
        }
        guard end <= page.count else { return nil }
        return Run(span: LogPage.Span(page: page, start: start, end: end), lines: lines, updates: updates)
    }

    /// The line of `location` (from `locate`, with no change to the log since) and its CR-LF.
    func span(of location: Location) -> LogPage.Span? {
        guard let page = page(location.pageIndex) else { return nil }
        return LogPage.Span(page: page, start: location.start, end: location.start + location.length + 2)
    }

    /// Closed page `index`, or the current page just after them.
    private func page(_ index: Int) -> LogPage? {
        index < pages.count ? pages[pages.index(pages.startIndex, offsetBy: index)] : current
    }

    func entry(_ progressive: Int) -> Entry? {
        guard let location = locate(progressive), var line = span(of: location) else { return nil }
        // A string per entry read back: only a rebind or a lost write reads the log.
        line.end -= 2
        return Entry(line: line.text, isUpdate: location.isUpdate, atMillis: location.atMillis)
    }

    /// Drops delivered entries (progressive ≤ `delivered`) older than the window or beyond the
    /// count limit.
    mutating func prune(delivered: Int, now: Int64, windowMillis: Int, maxCount: Int) {
        let held = slots.count
        guard held > 0, delivered >= firstProgressive else { return }
        // The slots that may go (delivered ones), counted first and then dropped together.
        let deliveredHeld = min(held - 1, delivered - firstProgressive) + 1
        var drop = 0
        while drop < deliveredHeld {
            let slot = slots[drop]
            let tooMany = held - drop > maxCount
            let tooOld = Saturating.subtract(now, millis(of: slot)) > Int64(windowMillis)
            guard tooMany || tooOld else { break }
            heldBytes -= Int(slot.length)
            drop += 1
        }
        guard drop > 0 else { return }
        slots.removeFirst(drop)
        slots.releaseUnusedCapacity()
        firstProgressive += drop
        // Free the closed pages no slot points into any more.
        let keepFrom = firstPage + (slots.first.map(pageIndex(of:)) ?? pages.count)
        while firstPage < keepFrom, !pages.isEmpty {
            pages.removeFirst()
            firstPage += 1
        }
        if slots.isEmpty {
            // Nothing held: the current page is given up (an idle session keeps no page; an
            // output still writing from it holds it until then).
            current = nil
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
