extension Array {
    /// Hands every element to `body`, in order, moved out of the array, which is empty
    /// afterwards (its capacity kept).
    ///
    /// For the per-update path, where elements hold references that many sessions share (a
    /// row, an encoding): `for element in array` copies each one, a retain, and emptying the
    /// array afterwards releases them, while a moved element goes on to where it is kept
    /// without either. The elements are reversed in place first, by the buffer's `swapAt`,
    /// which moves (the collection's `reverse()` swaps by copies), so that `popLast` takes
    /// them in order. Each is passed on with `consume`: without it the optimizer copied the
    /// element for `body` and destroyed the original after the call (a retain and a release of
    /// each reference it holds), which cost the engine-to-session hand-over about 300
    /// instructions per update (Benchmarks/server-callgrind.sh).
    mutating func moveOutInOrder(_ body: (consuming Element) -> Void) {
        reverseInPlace()
        while let element = popLast() { body(consume element) }
    }

    /// Reverses the elements by the buffer's `swapAt`, which moves them (see above), so that
    /// `popLast` then takes them in their former order.
    mutating func reverseInPlace() {
        withUnsafeMutableBufferPointer { elements in
            var (i, j) = (0, elements.count - 1)
            while i < j {
                elements.swapAt(i, j)
                (i, j) = (i + 1, j - 1)
            }
        }
    }
}
