import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import LightstreamerServer

/// `SessionTimers` against a plain dictionary of generations, and its tasks' cancellation.
struct SessionTimersTests {
    typealias Timer = SessionStateMachine.Timer

    static let kinds: [Timer] = [
        .keepalive, .sync, .pollIdle, .pollFlush, .unboundTimeout, .bandwidth, .inactivity,
        .messageWait(sequence: "a"), .messageWait(sequence: "b"),
    ]

    /// Timers armed on the wheel and as tasks, re-armed both ways, fired with current and stale
    /// generations, cancelled one by one and all at once: the generations match the reference
    /// and exactly the tasks of timers still armed stay uncancelled.
    @Test func followsADictionaryOfGenerations() {
        let loop = EmbeddedEventLoop()
        let fired = NIOLockedValueBox(0)
        var timers = SessionTimers()
        var reference: [Timer: UInt64] = [:]
        /// The task each armed timer has, if it is not on the wheel.
        var tasks: [Timer: Scheduled<Void>] = [:]
        var issued: [UInt64] = []
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let timer = Self.kinds.randomElement(using: &rng)!
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<3:
                let generation = timers.nextGeneration()
                #expect(!issued.contains(generation))
                issued.append(generation)
                timers.armedOnWheel(timer, generation: generation)
                tasks.removeValue(forKey: timer)?.cancel()
                reference[timer] = generation
            case 3..<6:
                let generation = timers.nextGeneration()
                issued.append(generation)
                let task = loop.scheduleTask(in: .hours(1)) { fired.withLockedValue { $0 += 1 } }
                timers.armed(timer, generation: generation, task: task)
                tasks[timer] = task
                reference[timer] = generation
            case 6:
                timers.cancel(timer)
                reference[timer] = nil
                tasks[timer] = nil
            case 7, 8:
                // Half the time the current generation, else one that is not (or no longer) it.
                let current = reference[timer]
                let generation = Bool.random(using: &rng) ? (current ?? 0) : issued.randomElement(using: &rng) ?? 0
                let expected = current != nil && generation == current
                let wasCurrent = timers.fire(timer, generation: generation)
                #expect(wasCurrent == expected)
                if expected {
                    reference[timer] = nil
                    // A real one has run by now; this one must not count below.
                    tasks.removeValue(forKey: timer)?.cancel()
                }
            default:
                if Int.random(in: 0..<50, using: &rng) == 0 {
                    timers.cancelAll()
                    reference = [:]
                    tasks = [:]
                }
            }
            for kind in Self.kinds { #expect(timers.generation(of: kind) == reference[kind]) }
            #expect(timers.count == reference.count)
        }
        // Tasks of timers no longer armed were cancelled (they do not run); those still armed run.
        loop.advanceTime(by: .hours(2))
        #expect(fired.withLockedValue { $0 } == tasks.count)
    }

    /// A keepalive first armed as a task, then on the wheel: the task is cancelled.
    @Test func aTimerMovingToTheWheelLosesItsTask() {
        let loop = EmbeddedEventLoop()
        let fired = NIOLockedValueBox(0)
        var timers = SessionTimers()
        let first = timers.nextGeneration()
        timers.armed(.keepalive, generation: first, task: loop.scheduleTask(in: .seconds(5)) { fired.withLockedValue { $0 += 1 } })
        let second = timers.nextGeneration()
        timers.armedOnWheel(.keepalive, generation: second)
        #expect(timers.generation(of: .keepalive) == second)
        let staleFired = timers.fire(.keepalive, generation: first)
        #expect(!staleFired)
        loop.advanceTime(by: .seconds(10))
        #expect(fired.withLockedValue { $0 } == 0)
        let currentFired = timers.fire(.keepalive, generation: second)
        #expect(currentFired)
        #expect(timers.generation(of: .keepalive) == nil)
    }
}

/// `SessionConnections` against a plain dictionary.
struct SessionConnectionsTests {
    final class Connection: OutboundConnection {
        let connectionID: ConnectionID
        var transport: TransportKind { .webSocket }
        init(_ id: UInt64) { connectionID = ConnectionID(id) }
        func send(_ text: String) {}
        func endStream(closeSocket: Bool) {}
        func reply(index: Int, line: String?) {}
    }

    @Test func followsADictionary() {
        var table = SessionConnections()
        var reference: [ConnectionID: Connection] = [:]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let id = ConnectionID(UInt64.random(in: 0..<5, using: &rng))
            switch Int.random(in: 0..<4, using: &rng) {
            case 0, 1:
                let c = Connection(id.raw)
                table[id] = c
                reference[id] = c
            case 2:
                #expect(table.removeValue(forKey: id) === reference.removeValue(forKey: id))
            default:
                table[id] = nil
                reference[id] = nil
            }
            for raw in UInt64(0)..<5 {
                #expect(table[ConnectionID(raw)] === reference[ConnectionID(raw)])
            }
            #expect(table.count == reference.count)
        }
    }
}
