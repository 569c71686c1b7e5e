/// A first-in first-out queue of plain values (no references inside) in one buffer whose
/// capacity is a power of two, with value semantics (copy on write).
///
/// Made for `NotificationLog`'s slots, which every delivered update appends to and pruning
/// drops from the front. NIO's `CircularBuffer` did this for some 47 instructions per
/// append, with a uniqueness check for each element removed (Benchmarks/server-callgrind.sh):
/// it stores optionals in a `ContiguousArray` and moves typed indices. Here an append is a
/// uniqueness check, a masked store and a count; dropping from the front changes two
/// integers and never touches the buffer, so it needs no uniqueness check; reading is a
/// masked load. The elements need no deinitialization (`BitwiseCopyable`), so the buffer is
/// freed as a whole.
///
/// An empty ring that never held anything allocates nothing (an idle session's log). The
/// capacity grows by doubling, from 8 (a log's steady size is its recovery window), and comes
/// down only when asked (`releaseUnusedCapacity`).
struct PlainRing<Element: BitwiseCopyable> {
    /// The buffer; its header is the capacity (a power of two, or 0 for none).
    private final class Storage: ManagedBuffer<Int, Element> {}

    private var storage: Storage?
    /// Where the first element is in the buffer.
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    var first: Element? { count == 0 ? nil : self[0] }

    /// The element `offset` places after the first (0 ≤ `offset` < `count`).
    subscript(offset: Int) -> Element {
        precondition(offset >= 0 && offset < count, "PlainRing offset out of range")
        guard let storage else { preconditionFailure("PlainRing holds elements without a buffer") }
        let at = head &+ offset
        return storage.withUnsafeMutablePointers { capacity, elements in elements[at & (capacity.pointee &- 1)] }
    }

    /// Appends `element`: inlined where the buffer has room and is this ring's own; otherwise
    /// (`appendReallocating`) the buffer is copied or grown first.
    @inline(__always)
    mutating func append(_ element: Element) {
        if count < capacity, isKnownUniquelyReferenced(&storage), let storage {
            Self.store(element, at: head &+ count, in: storage)
            count &+= 1
        } else {
            appendReallocating(element)
        }
    }

    @inline(never)
    private mutating func appendReallocating(_ element: Element) {
        let capacity = self.capacity
        reallocate(capacity: count == capacity ? max(8, capacity &* 2) : capacity)
        guard let storage else { return }
        Self.store(element, at: head &+ count, in: storage)
        count &+= 1
    }

    /// Stores `element` at `position` modulo the capacity.
    @inline(__always)
    private static func store(_ element: Element, at position: Int, in storage: Storage) {
        storage.withUnsafeMutablePointers { capacity, elements in
            (elements + (position & (capacity.pointee &- 1))).initialize(to: element)
        }
    }

    /// Drops the first `k` elements (all of them if `k` ≥ `count`; none if `k` ≤ 0).
    mutating func removeFirst(_ k: Int) {
        let k = min(max(k, 0), count)
        guard k > 0 else { return }
        head = (head &+ k) & (capacity &- 1)
        count -= k
        if count == 0 { head = 0 }
    }

    /// Gives back a buffer far larger than what the ring holds: none at all when it is empty;
    /// when it holds a quarter of its capacity or less, a buffer of twice what it holds (a
    /// power of two, at least 8). Otherwise a log that held a burst, or a stream's window,
    /// keeps that buffer after pruning: a session whose client went away kept 4 KB of empty
    /// slots (BENCHMARKS.md, "Clients that stop reading"). A ring that shrank must double what
    /// it holds to grow again, so one that hovers around a size is not reallocated back and
    /// forth.
    mutating func releaseUnusedCapacity() {
        let capacity = self.capacity
        if count == 0 {
            storage = nil
            head = 0
        } else if capacity > 8, count <= capacity / 4 {
            var smaller = 8
            while smaller < count * 2 { smaller *= 2 }
            reallocate(capacity: smaller)
        }
    }

    /// Changes every element in place, first to last (the buffer made this ring's own first).
    mutating func modifyEach(_ body: (inout Element) -> Void) {
        guard count > 0 else { return }
        if !isKnownUniquelyReferenced(&storage) { reallocate(capacity: capacity) }
        guard let storage else { return }
        let (head, count) = (self.head, self.count)
        storage.withUnsafeMutablePointers { capacity, elements in
            let mask = capacity.pointee &- 1
            for i in 0..<count { body(&elements[(head &+ i) & mask]) }
        }
    }

    /// The buffer's capacity, read through a pointer (the `header` property of a
    /// `ManagedBuffer` is checked for exclusive access at each read).
    var capacity: Int {
        storage?.withUnsafeMutablePointerToHeader { $0.pointee } ?? 0
    }

    /// A buffer of `capacity` (a power of two, at least `count`) with the elements moved to
    /// its start.
    private mutating func reallocate(capacity: Int) {
        let made = unsafeDowncast(Storage.create(minimumCapacity: capacity) { _ in capacity }, to: Storage.self)
        if let old = storage, count > 0 {
            let (head, count) = (self.head, self.count)
            // At most two runs: from the head to the buffer's end, then from its start.
            let firstRun = min(count, self.capacity - head)
            old.withUnsafeMutablePointerToElements { from in
                made.withUnsafeMutablePointerToElements { to in
                    to.initialize(from: from + head, count: firstRun)
                    (to + firstRun).initialize(from: from, count: count - firstRun)
                }
            }
        }
        storage = made
        head = 0
    }
}

// The buffer is written only through a uniquely referenced `storage` (`append`); copies
// that share it only read it.
extension PlainRing: @unchecked Sendable where Element: Sendable {}
