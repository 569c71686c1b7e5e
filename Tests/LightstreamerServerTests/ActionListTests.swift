import Testing

@testable import LightstreamerServer

/// `Output.takeList()` gives what `take()` gives, in the same order, whether or not the actions
/// fit the list's single-write form.
@Suite struct ActionListTests {
    typealias Action = SessionStateMachine.Action

    /// One step of a script run on two outputs alike.
    enum Step: CaseIterable {
        case writeA, writeB, lineA, cancelKeepalive, armSync
    }

    static func apply(_ step: Step, to output: inout SessionStateMachine.Output) {
        let a = ConnectionID(1), b = ConnectionID(2)
        switch step {
        case .writeA: output.write("U,1,1,x\r\n", to: a, updates: 1)
        case .writeB: output.write("PROBE\r\n", to: b, updates: 0)
        case .lineA: output.writeLine("U,1,2,y", to: a, updates: 1)
        case .cancelKeepalive: output.actions.append(.cancelTimer(.keepalive))
        case .armSync: output.actions.append(.armTimer(.sync, atMillis: 42))
        }
    }

    /// Every script of up to four steps, twice in a row on the same outputs (what is left
    /// after a take must not leak into the next one).
    @Test func takeListGivesWhatTakeGives() {
        var level: [[Step]] = [[]]
        var scripts = level
        for _ in 0..<4 {
            level = level.flatMap { s in Step.allCases.map { s + [$0] } }
            scripts += level
        }
        #expect(scripts.count == 1 + 5 + 25 + 125 + 625)
        var lone = 0
        for script in scripts {
            var byArray = SessionStateMachine.Output()
            var byList = SessionStateMachine.Output()
            for _ in 0..<2 {
                for step in script {
                    Self.apply(step, to: &byArray)
                    Self.apply(step, to: &byList)
                }
                let expected = byArray.take()
                let list = byList.takeList()
                #expect(Array(list) == expected, "script \(script)")
                #expect(list.count == expected.count)
                if expected.count == 1, case .write = expected[0] { lone += 1 }
            }
        }
        // The single-write form was exercised, not only the array.
        #expect(lone > 50)
    }

    @Test func aLoneWriteKeepsItsConnectionTextAndUpdates() {
        var output = SessionStateMachine.Output()
        output.write("U,1,1,a\r\n", to: ConnectionID(7), updates: 1)
        output.writeLine("U,1,1,b", to: ConnectionID(7), updates: 1)
        let list = output.takeList()
        #expect(Array(list) == [.write(ConnectionID(7), "U,1,1,a\r\nU,1,1,b\r\n", updates: 2)])
        #expect(output.takeList().isEmpty)
    }
}
