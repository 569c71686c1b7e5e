extension SessionStateMachine {
    /// Actions gathered while one event is handled; consecutive writes to one connection merge.
    struct Output: Sendable {
        private var stored: [Action] = []
        /// The last write, still growing: lines append to its text in place, and it joins
        /// `stored` only when another action follows or the output is taken. (Rebuilding the
        /// `.write` action for every line cost an enum copy, a retain and a uniqueness check.)
        private var pending: (conn: ConnectionID, text: String, updates: Int)?

        /// Every action so far, in order. Appending to it (`output.actions.append(...)`) first
        /// closes the pending write, so the order is kept.
        var actions: [Action] {
            get {
                guard let pending else { return stored }
                return stored + [.write(pending.conn, pending.text, updates: pending.updates)]
            }
            _modify {
                settle()
                yield &stored
            }
        }

        private mutating func settle() {
            guard let p = pending else { return }
            pending = nil
            stored.append(.write(p.conn, p.text, updates: p.updates))
        }

        mutating func write(_ text: String, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) { $0 += text }
        }

        /// `write(line + "\r\n")` without building that string first.
        mutating func writeLine(_ line: String, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) {
                $0 += line
                $0 += "\r\n"
            }
        }

        /// `writeLine` for a line held by the `NotificationLog`.
        mutating func writeLine(_ line: Substring, to conn: ConnectionID, updates: Int) {
            append(to: conn, updates: updates) {
                $0.append(contentsOf: line)
                $0 += "\r\n"
            }
        }

        /// Extends the last write when it goes to `conn`, else starts a new one.
        private mutating func append(to conn: ConnectionID, updates: Int, _ body: (inout String) -> Void) {
            var p: (conn: ConnectionID, text: String, updates: Int)
            if let current = pending, current.conn == conn {
                p = current
            } else {
                settle()
                if case .write(let c, let t, let u)? = stored.last, c == conn {
                    // The last action is a write to `conn` after all: it grows instead.
                    stored.removeLast()
                    p = (c, t, u)
                } else {
                    p = (conn, "", 0)
                }
            }
            // The only copy of the text from here on, so it grows in place.
            pending = nil
            body(&p.text)
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
