extension SessionStateMachine {
    /// Actions gathered while one event is handled; consecutive writes to one connection merge.
    struct Output: Sendable {
        private var stored: [Action] = []
        /// The last write, still growing: lines append to it in place, and it joins `stored` as
        /// a `.write` only when another action follows or the output is taken.
        private var pending: PendingWrite?
        static let initialWriteCapacity = 512

        /// A write being gathered: `bytes`, then the data lines of `span`, which are read from
        /// the notification log's page only when the write is made (a data line is copied
        /// once, into the log, rather than a second time here: Benchmarks/server-callgrind.sh).
        /// Bytes rather than a `String`: appending a line to a string cost about 400
        /// instructions (twice per line, with its line end), appending its UTF-8 to an array
        /// about 50; the string is made once per write.
        private struct PendingWrite: Sendable {
            var conn: ConnectionID
            var bytes: [UInt8] = []
            var span: LogPage.Span?
            var updates = 0

            /// Moves the span's bytes into `bytes` (before other bytes follow it).
            mutating func settleSpan() {
                guard let s = span else { return }
                span = nil
                if bytes.isEmpty { bytes.reserveCapacity(max(Output.initialWriteCapacity, s.count)) }
                s.append(to: &bytes)
            }

            /// The write's text.
            var text: String {
                guard let span else { return String(decoding: bytes, as: UTF8.self) }
                if bytes.isEmpty { return span.text }
                var all = bytes
                span.append(to: &all)
                return String(decoding: all, as: UTF8.self)
            }

            var action: Action { .write(conn, text, updates: updates) }

            /// Adds the lines of `span`: the current span grows when `span` follows it in its page.
            mutating func add(_ next: LogPage.Span, updates: Int) {
                self.updates += updates
                if span?.page === next.page, span?.end == next.start {
                    span?.end = next.end
                    return
                }
                settleSpan()
                span = next
            }
        }

        /// Every action so far, in order. Appending to it (`output.actions.append(...)`) first
        /// closes the pending write, so the order is kept.
        var actions: [Action] {
            get {
                guard let pending else { return stored }
                return stored + [pending.action]
            }
            _modify {
                settle()
                yield &stored
            }
        }

        private mutating func settle() {
            guard let p = pending else { return }
            pending = nil
            stored.append(p.action)
        }

        mutating func write(_ text: String, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) { $0.appendUTF8(text) }
        }

        /// `write(line + "\r\n")` without building that string first.
        mutating func writeLine(_ line: String, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) {
                $0.appendUTF8(line)
                $0.append(UInt8(ascii: "\r"))
                $0.append(UInt8(ascii: "\n"))
            }
        }

        /// Writes the lines of `span` (with their line ends) from their log page. Consecutive
        /// spans of one page grow one range: a batch of updates is one copy when written.
        mutating func write(_ span: LogPage.Span, to conn: ConnectionID, updates: Int) {
            if pending?.conn == conn {
                // In place, through the optional.
                pending?.add(span, updates: updates)
                return
            }
            settle()
            var p = reopenLastWrite(to: conn) ?? PendingWrite(conn: conn)
            p.add(span, updates: updates)
            pending = p
        }

        /// The last stored action when it is a write to `conn`: it grows instead of a new one
        /// starting.
        private mutating func reopenLastWrite(to conn: ConnectionID) -> PendingWrite? {
            guard case .write(let c, let t, let u)? = stored.last, c == conn else { return nil }
            stored.removeLast()
            return PendingWrite(conn: c, bytes: Array(t.utf8), updates: u)
        }

        /// Extends the last write when it goes to `conn`, else starts a new one.
        private mutating func append(to conn: ConnectionID, updates: Int, _ body: (inout [UInt8]) -> Void) {
            var p: PendingWrite
            if let current = pending, current.conn == conn {
                p = current
            } else {
                settle()
                if let reopened = reopenLastWrite(to: conn) {
                    p = reopened
                } else {
                    // Room for a batch of updates at once: growing from empty cost a
                    // reallocation every few lines.
                    p = PendingWrite(conn: conn)
                    p.bytes.reserveCapacity(Self.initialWriteCapacity)
                }
            }
            // The only copy of the bytes from here on, so they grow in place.
            pending = nil
            p.settleSpan()
            body(&p.bytes)
            p.updates += updates
            pending = p
        }

        mutating func take() -> [Action] {
            settle()
            defer { stored = [] }
            return stored
        }

        /// `take()` as an `ActionList`: a lone pending write comes without an array.
        mutating func takeList() -> ActionList {
            if stored.isEmpty, let p = pending {
                pending = nil
                return ActionList(write: p.text, to: p.conn, updates: p.updates)
            }
            return ActionList(take())
        }
    }
}
