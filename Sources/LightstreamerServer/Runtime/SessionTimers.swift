import NIOCore

/// The timers a session has armed, each with the generation it was armed with: a timer that
/// fires after it was re-armed or cancelled finds another generation and does nothing.
///
/// The keepalive (PROBE) and SYNC timers, which every bound stream keeps armed, usually fire
/// from the loop's `KeepaliveWheel` and need no task of their own: their generations are kept
/// inline. The other kinds, and those two when the wheel cannot hold them, go in a dictionary
/// that an idle streaming session leaves empty. One dictionary for every kind cost each idle
/// session an allocation of 168 bytes (heaptrack, BENCHMARKS.md "Session bookkeeping without
/// allocations").
struct SessionTimers {
    typealias Timer = SessionStateMachine.Timer

    /// A timer with a task of its own (nil: none, the timer is on the wheel).
    private struct Armed {
        var generation: UInt64
        var task: Scheduled<Void>?
    }

    /// The last generation handed out (`nextGeneration()`); generations start at 1.
    private var lastGeneration: UInt64 = 0
    /// Generations of the keepalive and SYNC timers armed on the wheel (0: not there).
    private var wheelKeepalive: UInt64 = 0
    private var wheelSync: UInt64 = 0
    private var others: [Timer: Armed] = [:]

    /// A generation that no timer of this session was armed with.
    mutating func nextGeneration() -> UInt64 {
        lastGeneration &+= 1
        return lastGeneration
    }

    /// The generation `timer` is armed with, nil when it is not armed.
    func generation(of timer: Timer) -> UInt64? {
        switch timer {
        case .keepalive where wheelKeepalive != 0: wheelKeepalive
        case .sync where wheelSync != 0: wheelSync
        default: others[timer]?.generation
        }
    }

    /// Records `timer` armed on the loop's wheel (keepalive and SYNC only).
    mutating func armedOnWheel(_ timer: Timer, generation: UInt64) {
        cancel(timer)
        switch timer {
        case .keepalive: wheelKeepalive = generation
        case .sync: wheelSync = generation
        default: others[timer] = Armed(generation: generation, task: nil)
        }
    }

    /// Records `timer` armed as a task of its own.
    mutating func armed(_ timer: Timer, generation: UInt64, task: Scheduled<Void>) {
        cancel(timer)
        others[timer] = Armed(generation: generation, task: task)
    }

    /// Forgets `timer` and cancels its task if it has one.
    mutating func cancel(_ timer: Timer) {
        switch timer {
        case .keepalive: wheelKeepalive = 0
        case .sync: wheelSync = 0
        default: break
        }
        others.removeValue(forKey: timer)?.task?.cancel()
    }

    /// `timer` fired with `generation`: forgets it and returns true when that is the generation
    /// it is armed with; false (nothing changes) when it was re-armed or cancelled since.
    mutating func fire(_ timer: Timer, generation: UInt64) -> Bool {
        guard self.generation(of: timer) == generation else { return false }
        switch timer {
        case .keepalive where wheelKeepalive != 0: wheelKeepalive = 0
        case .sync where wheelSync != 0: wheelSync = 0
        default: others[timer] = nil
        }
        return true
    }

    /// Forgets every timer and cancels their tasks.
    mutating func cancelAll() {
        wheelKeepalive = 0
        wheelSync = 0
        for (_, armed) in others { armed.task?.cancel() }
        others = [:]
    }

    /// How many timers are armed (for tests).
    var count: Int { (wheelKeepalive != 0 ? 1 : 0) + (wheelSync != 0 ? 1 : 0) + others.count }
}
