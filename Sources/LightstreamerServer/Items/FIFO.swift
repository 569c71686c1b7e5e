/// A small first-in first-out queue on an array with a moving head (amortised O(1) pops).
struct FIFO<Element>: Sequence {
    private var storage: [Element] = []
    private var head = 0

    init() {}

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ e: Element) { storage.append(e) }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let e = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return e
    }

    mutating func removeAll() {
        storage.removeAll()
        head = 0
    }

    /// Index of the last element satisfying `predicate`, as an offset from the head.
    func lastIndex(where predicate: (Element) -> Bool) -> Int? {
        var i = storage.count - 1
        while i >= head {
            if predicate(storage[i]) { return i - head }
            i -= 1
        }
        return nil
    }

    subscript(offset: Int) -> Element {
        get { storage[head + offset] }
        set { storage[head + offset] = newValue }
    }

    mutating func remove(at offset: Int) { storage.remove(at: head + offset) }

    /// The last `n` elements, oldest first.
    func suffix(_ n: Int) -> ArraySlice<Element> {
        storage[Swift.max(head, storage.count - Swift.max(0, n))...]
    }

    func makeIterator() -> ArraySlice<Element>.Iterator { storage[head...].makeIterator() }
}

extension FIFO: Sendable where Element: Sendable {}
