extension SessionStateMachine {
    /// Actions gathered while one event is handled; consecutive writes to one connection merge.
    struct Output: Sendable {
        private var stored: [Action] = []
        /// The last write, still growing: lines append to its bytes in place, and it joins
        /// `stored` as a `.write` only when another action follows or the output is taken.
        /// Bytes rather than a `String`: appending a line to a string cost about 400
        /// instructions (twice per line, with its line end), appending its UTF-8 to an array
        /// about 50; the string is made once per write (Benchmarks/server-callgrind.sh).
        private var pending: (conn: ConnectionID, bytes: [UInt8], updates: Int)?
        static let initialWriteCapacity = 512

        /// Every action so far, in order. Appending to it (`output.actions.append(...)`) first
        /// closes the pending write, so the order is kept.
        var actions: [Action] {
            get {
                guard let pending else { return stored }
                return stored + [.write(pending.conn, String(decoding: pending.bytes, as: UTF8.self), updates: pending.updates)]
            }
            _modify {
                settle()
                yield &stored
            }
        }

        private mutating func settle() {
            guard let p = pending else { return }
            pending = nil
            stored.append(.write(p.conn, String(decoding: p.bytes, as: UTF8.self), updates: p.updates))
        }

        mutating func write(_ text: String, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) { $0.appendUTF8(text) }
        }

        /// `write(line + "\r\n")` without building that string first.
        mutating func writeLine(_ line: String, to conn: ConnectionID, updates: Int) {
            writeLine(.text(line), to: conn, updates: updates)
        }

        /// `writeLine` for a data line, which may be made of parts.
        mutating func writeLine(_ line: DataLine, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) {
                line.append(to: &$0)
                $0.append(UInt8(ascii: "\r"))
                $0.append(UInt8(ascii: "\n"))
            }
        }

        /// Extends the last write when it goes to `conn`, else starts a new one.
        private mutating func append(to conn: ConnectionID, updates: Int, _ body: (inout [UInt8]) -> Void) {
            var p: (conn: ConnectionID, bytes: [UInt8], updates: Int)
            if let current = pending, current.conn == conn {
                p = current
            } else {
                settle()
                if case .write(let c, let t, let u)? = stored.last, c == conn {
                    // The last action is a write to `conn` after all: it grows instead.
                    stored.removeLast()
                    p = (c, Array(t.utf8), u)
                } else {
                    // Room for a batch of updates at once: growing from empty cost a
                    // reallocation every few lines.
                    var bytes: [UInt8] = []
                    bytes.reserveCapacity(Self.initialWriteCapacity)
                    p = (conn, bytes, 0)
                }
            }
            // The only copy of the bytes from here on, so they grow in place.
            pending = nil
            body(&p.bytes)
            p.updates += updates
            pending = p
        }

        mutating func take() -> [Action] {
            settle()
            defer { stored = [] }
            return stored
        }
    }
}
