import NIOCore

/// How long a `DeliveryPump` that still has work waits before its next run, so that its event
/// loop polls its sockets (accepts connections, reads requests) even when it is saturated.
///
/// NIO runs due tasks until none is left before it polls. After a run with work left the pump
/// comes back `short` later, which is enough while the tasks its run queued (the sessions'
/// writes) take less than that. A saturated loop queues more than that: the pump was due again
/// before the loop polled, and the loop went minutes without accepting a connection (16,000
/// sessions offered 1.6 M updates/s: stuck at 8,563 sessions for 140 s). So once the pump has
/// been busy for `pollEveryNanos` (100 ms), it waits `long` once: the queued tasks run out, the
/// loop polls, and the pump goes on. Every 50 ms cured the stall too, but cost more at 8,000
/// sessions (p99 321–343 ms against 235–248 ms; BENCHMARKS.md, "Sessions without a stream;
/// accepting while saturated").
///
/// A value without I/O: the pump asks it, under its lock, for each wait.
struct SaturationYield {
    static let short = TimeAmount.microseconds(250)
    static let long = TimeAmount.milliseconds(2)
    /// Busy time after which the pump waits `long` once (nanoseconds).
    static let pollEveryNanos: UInt64 = 100_000_000

    /// Since when the pump has had work left after each run (uptime nanoseconds).
    private var busySince: UInt64?

    /// The wait after a run at `now` that left work.
    mutating func wait(at now: UInt64) -> TimeAmount {
        guard let since = busySince else {
            busySince = now
            return Self.short
        }
        guard now &- since >= Self.pollEveryNanos else { return Self.short }
        busySince = now
        return Self.long
    }

    /// The pump ran out of work.
    mutating func idle() {
        busySince = nil
    }
}
