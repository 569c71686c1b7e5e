import NIOConcurrencyHelpers
import NIOCore

/// Collects what sessions write to one connection, from any thread, and hands it to the
/// channel's event loop in order, in as few hops as possible (one hop drains everything queued
/// meanwhile, so bursts of updates become one write).
final class OutboundQueue: Sendable {
    enum Op: Sendable {
        case text(String)
        case end(closeSocket: Bool)
        case reply(index: Int, line: String?)
    }

    private struct State {
        var ops: [Op] = []
        var scheduled = false
    }

    private let state = NIOLockedValueBox(State())
    let eventLoop: any EventLoop
    private let drain: @Sendable ([Op]) -> Void

    /// `drain` runs on `eventLoop` with the queued operations, consecutive texts merged.
    init(eventLoop: any EventLoop, drain: @escaping @Sendable ([Op]) -> Void) {
        self.eventLoop = eventLoop
        self.drain = drain
    }

    func push(_ op: Op) { push([op]) }

    /// Queues `ops` together: the event loop sees all of them in one drain or none (a stream's
    /// last line and its end must reach the handler at once, docs/protocol/TLCP.md §1.3 on `LOOP`
    /// over WS).
    func push(_ ops: Op...) { push(ops) }

    private func push(_ ops: [Op]) {
        let schedule = state.withLockedValue { s -> Bool in
            for op in ops {
                if case .text(let t) = op, case .text(var previous)? = s.ops.last {
                    // Drop the array's copy first so that `previous` is unique and grows in place.
                    s.ops.removeLast()
                    previous += t
                    s.ops.append(.text(previous))
                } else {
                    s.ops.append(op)
                }
            }
            if s.scheduled { return false }
            s.scheduled = true
            return true
        }
        guard schedule else { return }
        eventLoop.execute { [self] in
            let ops = state.withLockedValue { s -> [Op] in
                s.scheduled = false
                defer { s.ops = [] }
                return s.ops
            }
            drain(ops)
        }
    }
}

/// Unique ids for connections and HTTP responses.
enum ConnectionIDs {
    private static let counter = NIOLockedValueBox<UInt64>(0)
    static func next() -> ConnectionID {
        ConnectionID(
            counter.withLockedValue { c -> UInt64 in
                c += 1
                return c
            })
    }
}
