import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// Collects what sessions write to one connection, from any thread, and hands it to the
/// channel's event loop in order, in as few hops as possible (one hop drains everything queued
/// meanwhile, so bursts of updates become one write).
///
/// It is also the connection as sessions see it (`OutboundConnection`): a WebSocket, or one
/// HTTP response. One object per connection rather than a wrapper around a queue: one
/// allocation less with every idle WebSocket, and one call less on every write. A subclass
/// writes what is drained (`drain(_:)`): the WebSocket's handler is its own queue
/// (`WebSocketTLCPHandler`), an HTTP response's queue calls its handler back
/// (`CallbackOutboundQueue`).
///
/// `@unchecked Sendable` because the class is not final: what any thread touches here is the
/// locked state and constants. A subclass keeps whatever else it holds to its event loop.
class OutboundQueue: OutboundConnection, @unchecked Sendable {
    enum Op: Sendable {
        case text(String)
        case end(closeSocket: Bool)
        case reply(index: Int, line: String?)
    }

    private struct State {
        var ops: [Op] = []
        /// The bytes of text in `ops` (saturating: 32 bits keep the state two words).
        var bytes: UInt32 = 0
        var scheduled = false
        /// `bytes` passed the queue's limit: texts are dropped until the drain, which closes
        /// the connection (`BacklogGuard`).
        var full = false

        /// Queues `op`; a text right after a text joins it. Once the texts waiting pass
        /// `limit`, later texts and replies are dropped: the drain finds more than the limit
        /// and closes the connection as a slow client's, which is what writing them would
        /// have come to (the session may recover on a new connection).
        mutating func append(_ op: Op, limit: Int) {
            let n: Int
            switch op {
            case .text(let t): n = t.utf8.count
            case .reply(_, let line): n = line.map { $0.utf8.count + 2 } ?? 0
            case .end: n = 0
            }
            if n > 0 {
                if full { return }
                let (sum, overflow) = bytes.addingReportingOverflow(UInt32(clamping: n))
                bytes = overflow ? .max : sum
                // At the count's own ceiling too, for a limit configured past 4 GiB.
                if Int(bytes) > limit || bytes == .max { full = true }
            }
            if case .text(let t) = op, case .text(var previous)? = ops.last {
                // Drop the array's copy first so that `previous` is unique and grows in place.
                ops.removeLast()
                previous += t
                ops.append(.text(previous))
            } else {
                ops.append(op)
            }
        }

        /// Whether the caller must schedule the drain (nobody has yet).
        mutating func claimDrain() -> Bool {
            if scheduled { return false }
            scheduled = true
            return true
        }
    }

    /// Inline in the object (a lock box would be one more allocation per connection).
    private let state = Mutex(State())
    let connectionID: ConnectionID
    let transport: TransportKind
    let eventLoop: any EventLoop

    init(connectionID: ConnectionID, transport: TransportKind, eventLoop: any EventLoop) {
        self.connectionID = connectionID
        self.transport = transport
        self.eventLoop = eventLoop
    }

    /// Writes `ops` (consecutive texts merged), on `eventLoop`. This class drops them.
    func drain(_ ops: [Op]) {}

    /// The most bytes of text that may wait for one drain (`State.append`): a connection's
    /// `maxBacklogBytes`. Without a limit here, a loop that does not come round (saturated,
    /// or the session writing from another thread) let the queue grow without bound before
    /// the drain's own check (`BacklogGuard`) could see it.
    var byteLimit: Int { .max }

    func send(_ text: String) { push(.text(text)) }
    func endStream(closeSocket: Bool) { push(.end(closeSocket: closeSocket)) }
    func send(_ text: String, thenEndStream closeSocket: Bool) { push(.text(text), .end(closeSocket: closeSocket)) }

    /// An HTTP response answers line `index` of its batch (`HTTPResponseWriter` counts them);
    /// a WebSocket writes the line, if any, like any other.
    func reply(index: Int, line: String?) {
        switch transport {
        case .http: push(.reply(index: index, line: line))
        case .webSocket: if let line { push(.text(line + "\r\n")) }
        }
    }

    /// Queues `op` (one per session write: no array is made for it).
    func push(_ op: Op) {
        let limit = byteLimit
        if state.withLock({ s -> Bool in
            s.append(op, limit: limit)
            return s.claimDrain()
        }) {
            scheduleDrain()
        }
    }

    /// Queues `first` and `second` together: the event loop sees both in one drain or neither
    /// (a stream's last line and its end must reach the handler at once, docs/protocol/TLCP.md
    /// §1.3 on `LOOP` over WS).
    func push(_ first: Op, _ second: Op) {
        let limit = byteLimit
        if state.withLock({ s -> Bool in
            s.append(first, limit: limit)
            s.append(second, limit: limit)
            return s.claimDrain()
        }) {
            scheduleDrain()
        }
    }

    private func scheduleDrain() {
        eventLoop.execute { [self] in
            let ops = state.withLock { s -> [Op] in
                s.scheduled = false
                s.bytes = 0
                s.full = false
                defer { s.ops = [] }
                return s.ops
            }
            drain(ops)
        }
    }
}

/// An `OutboundQueue` whose drain is a closure: an HTTP response's (`HTTPTLCPHandler`).
final class CallbackOutboundQueue: OutboundQueue, @unchecked Sendable {
    private let onDrain: @Sendable ([Op]) -> Void
    private let limit: Int

    /// `drain` runs on `eventLoop` with the queued operations, consecutive texts merged.
    init(
        connectionID: ConnectionID, transport: TransportKind, eventLoop: any EventLoop, byteLimit: Int = .max,
        drain: @escaping @Sendable ([Op]) -> Void
    ) {
        self.onDrain = drain
        self.limit = byteLimit
        super.init(connectionID: connectionID, transport: transport, eventLoop: eventLoop)
    }

    override func drain(_ ops: [Op]) { onDrain(ops) }
    override var byteLimit: Int { limit }
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
