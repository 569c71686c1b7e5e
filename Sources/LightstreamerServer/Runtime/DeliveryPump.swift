import NIOConcurrencyHelpers
import NIOCore

/// Runs the engine-event batches of the sessions of one event loop (`ServerSession.drainInbox`)
/// as one task, at most `sliceNanos` of work per loop iteration.
///
/// NIO runs queued tasks until none are left before it polls its sockets again. If every
/// session scheduled its own task, an engine thread that produces faster than the loop writes
/// would keep the queue from ever emptying, and the loop would stop accepting connections and
/// reading requests. Here producers only append to a list while the pump is scheduled; after a
/// slice the pump reschedules itself a millisecond ahead, so the loop polls in between.
final class DeliveryPump: Sendable {
    let eventLoop: any EventLoop
    /// Delay of the first run after the pump went idle (`SessionSettings.maxUpdateDelayMillis`).
    let delayMillis: Int
    static let sliceNanos: UInt64 = 2_000_000

    private struct State {
        var ready: [ServerSession] = []
        var scheduled = false
    }

    private let state = NIOLockedValueBox(State())

    init(eventLoop: any EventLoop, delayMillis: Int) {
        self.eventLoop = eventLoop
        self.delayMillis = delayMillis
    }

    /// `session` has a batch waiting (it adds itself once per batch).
    func add(_ session: ServerSession) {
        let schedule = state.withLockedValue { s -> Bool in
            s.ready.append(session)
            if s.scheduled { return false }
            s.scheduled = true
            return true
        }
        guard schedule else { return }
        if delayMillis > 0 {
            eventLoop.scheduleTask(in: .milliseconds(Int64(delayMillis))) { self.run() }
        } else {
            eventLoop.execute { self.run() }
        }
    }

    private func run() {
        let start = NIODeadline.now().uptimeNanoseconds
        while true {
            let batch = state.withLockedValue { s -> [ServerSession] in
                let b = s.ready
                s.ready = []
                if b.isEmpty { s.scheduled = false }
                return b
            }
            if batch.isEmpty { return }
            for i in batch.indices {
                batch[i].drainInbox()
                if NIODeadline.now().uptimeNanoseconds &- start > Self.sliceNanos {
                    let rest = batch[(i + 1)...]
                    state.withLockedValue { s in s.ready.insert(contentsOf: rest, at: 0) }
                    // Still scheduled: producers keep appending; the loop polls first.
                    eventLoop.scheduleTask(in: .milliseconds(1)) { self.run() }
                    return
                }
            }
        }
    }
}
