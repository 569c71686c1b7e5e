import NIOConcurrencyHelpers

/// Periodic work per item for the simulated adapters, on an `EngineClock`.
///
/// `start` runs `tick` after `firstDelay`, then again after whatever delay each tick returns
/// (nil stops), measured from the previous deadline so rates do not drift. `stop` cancels;
/// a tick that already started when `stop` is called may still finish.
final class ItemTicker: Sendable {
    private struct Run: Sendable {
        var generation: UInt64
        var timer: (any EngineTimer)?
    }

    private struct State: Sendable {
        var runs: [String: Run] = [:]
        var nextGeneration: UInt64 = 0
    }

    private let clock: any EngineClock
    private let state = NIOLockedValueBox(State())

    init(clock: any EngineClock) {
        self.clock = clock
    }

    func start(_ item: String, firstDelay: UInt64, tick: @escaping @Sendable () -> UInt64?) {
        let deadline = clock.now() &+ firstDelay
        let generation = state.withLockedValue { s -> UInt64 in
            s.runs[item]?.timer?.cancel()
            s.nextGeneration += 1
            s.runs[item] = Run(generation: s.nextGeneration, timer: nil)
            return s.nextGeneration
        }
        arm(item, generation: generation, at: deadline, tick: tick)
    }

    func stop(_ item: String) {
        let run = state.withLockedValue { $0.runs.removeValue(forKey: item) }
        run?.timer?.cancel()
    }

    func stopAll() {
        let runs = state.withLockedValue { s -> [Run] in
            defer { s.runs.removeAll() }
            return Array(s.runs.values)
        }
        for run in runs { run.timer?.cancel() }
    }

    func isRunning(_ item: String) -> Bool {
        state.withLockedValue { $0.runs[item] != nil }
    }

    private func arm(_ item: String, generation: UInt64, at deadline: UInt64, tick: @escaping @Sendable () -> UInt64?) {
        let timer = clock.schedule(at: deadline) { [weak self] in
            self?.fire(item, generation: generation, deadline: deadline, tick: tick)
        }
        let stale = state.withLockedValue { s -> Bool in
            guard s.runs[item]?.generation == generation else { return true }
            s.runs[item]?.timer = timer
            return false
        }
        if stale { timer.cancel() }
    }

    private func fire(_ item: String, generation: UInt64, deadline: UInt64, tick: @escaping @Sendable () -> UInt64?) {
        guard state.withLockedValue({ $0.runs[item]?.generation == generation }) else { return }
        guard let delay = tick() else {
            state.withLockedValue { s in
                if s.runs[item]?.generation == generation { s.runs.removeValue(forKey: item) }
            }
            return
        }
        arm(item, generation: generation, at: max(deadline &+ delay, clock.now()), tick: tick)
    }
}
