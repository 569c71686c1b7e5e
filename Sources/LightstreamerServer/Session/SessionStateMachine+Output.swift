extension SessionStateMachine {
    /// Actions gathered while one event is handled; consecutive writes to one connection merge.
    struct Output: Sendable {
        var actions: [Action] = []

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
            if case .write(let c, var t, let u)? = actions.last, c == conn {
                // Drop the array's copy first so that `t` is unique and grows in place.
                actions.removeLast()
                body(&t)
                actions.append(.write(c, t, updates: u + updates))
            } else {
                var t = ""
                body(&t)
                actions.append(.write(conn, t, updates: updates))
            }
        }

        mutating func take() -> [Action] {
            defer { actions = [] }
            return actions
        }
    }
}
