import Foundation
import Testing

@testable import LightstreamerClient

/// The flow control between the transports and the application (`ReadGate`).
@Suite struct ReadGateTests {
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func bump() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }

    @Test func closesAboveHighAndWakesReadersAtLow() {
        let gate = ReadGate(high: 100, low: 20)
        let woken = Counter()
        let wake: @Sendable () -> Void = { woken.bump() }
        let open1 = gate.admit(orWhenOpen: wake)
        #expect(open1)
        gate.add(99)
        let open2 = gate.admit(orWhenOpen: wake)
        #expect(open2)
        gate.add(1)
        // 100 in flight: closed; both readers wait.
        let open3 = gate.admit(orWhenOpen: wake)
        let open4 = gate.admit(orWhenOpen: wake)
        #expect(!open3 && !open4)
        gate.remove(50)
        #expect(woken.value == 0)
        gate.remove(30)
        #expect(woken.value == 2)
        #expect(gate.linesInFlight == 20)
        // Woken once only.
        gate.remove(20)
        #expect(woken.value == 2)
        let open5 = gate.admit(orWhenOpen: wake)
        #expect(open5)
    }

    /// Lines handed in from one thread and delivered on another always balance out.
    @Test func balancesAcrossThreads() async {
        let gate = ReadGate(high: 64, low: 8)
        let done = DispatchGroup()
        let q = DispatchQueue(label: "deliveries")
        for _ in 0..<1000 {
            gate.add(3)
            done.enter()
            q.async {
                gate.remove(3)
                done.leave()
            }
        }
        done.wait()
        #expect(gate.linesInFlight == 0)
    }
}
