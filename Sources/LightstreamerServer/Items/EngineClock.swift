import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The time source of the item engine and of the simulated adapters: a monotonic clock in
/// nanoseconds plus one-shot timers. Injectable, so that tests drive time by hand
/// (`ManualEngineClock`) instead of sleeping.
public protocol EngineClock: Sendable {
    /// Monotonic time in nanoseconds (arbitrary origin, never goes back).
    func now() -> UInt64
    /// Runs `action` once, at or after `deadline` (a `now()` value), on some thread. The action
    /// must not block.
    @discardableResult
    func schedule(at deadline: UInt64, _ action: @escaping @Sendable () -> Void) -> any EngineTimer
}

/// A scheduled action that can be cancelled (cancelling a timer that fired does nothing).
public protocol EngineTimer: Sendable {
    /// Cancels the timer, if it has not fired yet.
    func cancel()
}

extension EngineClock {
    /// Runs `action` after `delay` nanoseconds.
    @discardableResult
    public func schedule(afterNanoseconds delay: UInt64, _ action: @escaping @Sendable () -> Void) -> any EngineTimer {
        schedule(at: now() &+ delay, action)
    }
}

/// Nanoseconds between two events at `perSecond` events per second (at least 1 ns).
func nanosecondsPerEvent(_ perSecond: Double) -> UInt64 {
    guard perSecond.isFinite, perSecond > 0 else { return UInt64.max / 4 }
    let ns = 1_000_000_000.0 / perSecond
    if ns >= Double(UInt64.max / 4) { return UInt64.max / 4 }
    return max(1, UInt64(ns))
}

// MARK: - Real time

/// Real time on a SwiftNIO event loop: `NIODeadline` (monotonic uptime) and the loop's timer
/// heap. Timer actions run on that loop and must stay short (the engine only takes its lock).
public struct SystemEngineClock: EngineClock {
    private let eventLoop: any EventLoop

    /// A clock whose timers run on `eventLoop`.
    public init(eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()) {
        self.eventLoop = eventLoop
    }

    /// The event loop's monotonic uptime, in nanoseconds.
    public func now() -> UInt64 {
        NIODeadline.now().uptimeNanoseconds
    }

    /// Schedules `action` on the event loop at `deadline`.
    @discardableResult
    public func schedule(at deadline: UInt64, _ action: @escaping @Sendable () -> Void) -> any EngineTimer {
        let scheduled = eventLoop.scheduleTask(deadline: .uptimeNanoseconds(deadline)) { action() }
        return NIOTimer(scheduled: scheduled)
    }

    private struct NIOTimer: EngineTimer {
        let scheduled: Scheduled<Void>
        func cancel() { scheduled.cancel() }
    }
}

// MARK: - Manual time (tests)

/// A clock that moves only when told to. `advance(by:)` runs every timer that falls due, in
/// deadline order (timers scheduled by those actions included), on the calling thread, with
/// `now()` set to each timer's deadline while it runs.
public final class ManualEngineClock: EngineClock {
    private struct Entry {
        var id: UInt64
        var deadline: UInt64
        var action: @Sendable () -> Void
    }

    private struct State {
        var now: UInt64
        var nextId: UInt64 = 0
        var pending: [UInt64: Entry] = [:]
    }

    private let state: NIOLockedValueBox<State>

    /// A clock reading `start` nanoseconds, with no timers.
    public init(startingAt start: UInt64 = 1_000_000_000) {
        state = NIOLockedValueBox(State(now: start))
    }

    /// The current manual time, in nanoseconds.
    public func now() -> UInt64 {
        state.withLockedValue { $0.now }
    }

    /// How many timers are waiting.
    public var pendingTimerCount: Int {
        state.withLockedValue { $0.pending.count }
    }

    /// Keeps `action` until `advance` passes `deadline`.
    @discardableResult
    public func schedule(at deadline: UInt64, _ action: @escaping @Sendable () -> Void) -> any EngineTimer {
        let id = state.withLockedValue { s -> UInt64 in
            s.nextId += 1
            s.pending[s.nextId] = Entry(id: s.nextId, deadline: deadline, action: action)
            return s.nextId
        }
        return ManualTimer(clock: self, id: id)
    }

    fileprivate func cancel(id: UInt64) {
        _ = state.withLockedValue { $0.pending.removeValue(forKey: id) }
    }

    /// Moves time forward, firing due timers in order.
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let ns = UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds / 1_000_000_000))
        advance(byNanoseconds: ns)
    }

    /// Moves time forward by `ns` nanoseconds, firing due timers in order.
    public func advance(byNanoseconds ns: UInt64) {
        let target = state.withLockedValue { $0.now &+ ns }
        while true {
            let next: Entry? = state.withLockedValue { s in
                let due = s.pending.values.filter { $0.deadline <= target }
                guard let first = due.min(by: { ($0.deadline, $0.id) < ($1.deadline, $1.id) }) else { return nil }
                s.pending.removeValue(forKey: first.id)
                s.now = max(s.now, first.deadline)
                return first
            }
            guard let entry = next else { break }
            entry.action()
        }
        state.withLockedValue { $0.now = max($0.now, target) }
    }

    private struct ManualTimer: EngineTimer {
        let clock: ManualEngineClock
        let id: UInt64
        func cancel() { clock.cancel(id: id) }
    }
}
