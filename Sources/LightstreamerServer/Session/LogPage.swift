/// A page of the `NotificationLog`: a fixed-capacity buffer that lines are appended to, each
/// followed by its CR-LF, and never changed afterwards.
///
/// A class so that the session's output can point at the bytes of the lines it writes (a
/// `LogPage.Span`) instead of copying each line a second time: bytes below `count` never
/// change and the buffer never moves, so a span stays valid for as long as it holds the page,
/// even after the log dropped it. Only the session's state machine appends to its pages, under
/// the session's lock, and it reads spans back under the same lock (when its output is taken),
/// hence `@unchecked Sendable`. A copy of the state machine shares the pages it had: each copy
/// appends after the other's bytes and its slots point at its own, so both stay correct.
final class LogPage: @unchecked Sendable {
    /// Bytes the page holds at most.
    let capacity: Int
    /// Bytes written so far.
    private(set) var count = 0
    private let base: UnsafeMutablePointer<UInt8>

    /// `capacity` is taken as at least 1.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Room left.
    var free: Int { capacity - count }

    /// Appends `line` and its CR-LF; returns where the line starts and its length without the
    /// CR-LF. The caller checked that `line.byteCount + 2` bytes are `free`; the page itself
    /// never writes past its end (a line with too little room would come out cut short, which
    /// `NotificationLogTests.aLineJustFittingOrNotFittingThePage` would see).
    @inline(__always)
    func append(_ line: DataLine) -> (start: Int, length: Int) {
        let start = count
        let room = capacity - start
        guard room >= 2 else { return (start, 0) }
        let written = line.write(into: UnsafeMutableBufferPointer(start: base + start, count: room - 2))
        base[start + written] = UInt8(ascii: "\r")
        base[start + written + 1] = UInt8(ascii: "\n")
        count = start + written + 2
        return (start, written)
    }

    /// Calls `body` with the bytes from `start` to `end`, clamped to what was written (bounds
    /// rather than a `Range`, whose making traps when they are out of order).
    func withBytes<R>(from start: Int, to end: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let lower = min(max(start, 0), count)
        let upper = min(max(end, lower), count)
        return body(UnsafeBufferPointer(start: base + lower, count: upper - lower))
    }

    /// Some consecutive bytes of a page: lines with their CR-LFs, as the output writes them.
    /// Bounds as two integers rather than a `Range`: the optimizer destroyed an optional
    /// holding a `Range` through generic witnesses, about 400 instructions per line.
    struct Span: Sendable {
        let page: LogPage
        var start: Int
        var end: Int

        var count: Int { max(0, end - start) }

        /// Appends the span's bytes.
        func append(to bytes: inout [UInt8]) {
            page.withBytes(from: start, to: end) { bytes.append(contentsOf: $0) }
        }

        /// The span's bytes as a string.
        var text: String { page.withBytes(from: start, to: end) { String(decoding: $0, as: UTF8.self) } }
    }
}
