extension SessionStateMachine {
    /// Actions in order, with a single one held without an array.
    ///
    /// A run of updates handed to a session on its loop (`tableEvents(subscriptionId:run:…)`)
    /// almost always gives one action, the `.write` of its lines. Returned as `[Action]`, that
    /// one action cost an array's allocation and release per run, about 20 instructions per
    /// update at 10 updates a run (Benchmarks/server-callgrind.sh).
    struct ActionList: RandomAccessCollection, Sendable {
        /// A lone write is kept as its parts: an `Action` is as large as its largest case, and
        /// a lone one held inline was copied whole wherever the list went.
        private enum Storage: Sendable {
            case write(ConnectionID, String, updates: Int)
            case many([Action])
        }

        private let storage: Storage

        init(_ actions: [Action]) { storage = .many(actions) }
        init(write text: String, to conn: ConnectionID, updates: Int) { storage = .write(conn, text, updates: updates) }

        var startIndex: Int { 0 }
        var endIndex: Int {
            switch storage {
            case .write: return 1
            case .many(let actions): return actions.count
            }
        }

        subscript(position: Int) -> Action {
            switch storage {
            case .write(let conn, let text, let updates):
                precondition(position == 0, "ActionList index out of range")
                return .write(conn, text, updates: updates)
            case .many(let actions):
                return actions[position]
            }
        }
    }
}
