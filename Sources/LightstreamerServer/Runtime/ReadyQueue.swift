/// The sessions with a batch waiting for a `DeliveryPump` run, in the order they added
/// themselves.
///
/// A run takes what waits as one batch (`take`) and, when its slice runs out, leaves the rest
/// (`leave`), which the next `take` returns before anything added since. The rest is kept as
/// the slice of the batch it is: put back in front of the array instead, it was copied there,
/// a retain of every session left (a cache miss each) at every slice; under twice the load
/// the machine carries, up to some 8,000 sessions at each slice and 4 % of the CPU (BENCHMARKS.md,
/// "Updates folded from the first that waits").
struct ReadyQueue<Element> {
    private var added: [Element] = []
    private var left: ArraySlice<Element> = []

    var isEmpty: Bool { added.isEmpty && left.isEmpty }

    mutating func append(_ element: Element) {
        added.append(element)
    }

    /// What a run left, if anything; else everything added (the queue is then empty).
    mutating func take() -> ArraySlice<Element> {
        if !left.isEmpty {
            defer { left = [] }
            return left
        }
        defer { added = [] }
        return added[...]
    }

    /// Puts back what a run did not get to, in front of what was added since (and of
    /// anything left before, which a pump's runs, one at a time, never have).
    mutating func leave(_ rest: ArraySlice<Element>) {
        if left.isEmpty {
            left = rest
        } else {
            left = rest + left
        }
    }
}

extension ReadyQueue: Sendable where Element: Sendable {}
