import TLCP
import Testing

@testable import LightstreamerClient

/// Network input never traps: mutated and random server lines go through a live engine.
@Suite struct EngineRobustnessTests {
    static let valid = [
        "CONOK,sid,70000,5000,*", "SUBOK,1,1,2", "SUBCMD,2,1,3,1,2", "U,1,1,a|b", "U,2,1,k|ADD|x", "U,1,1,^P[]|",
        "U,1,1,^Tbdzap|", "EOS,2,1", "CS,2,1", "OV,1,1,3", "CONF,1,2.5,filtered", "MSGDONE,*,1,ok", "MSGFAIL,s,3,39,2",
        "REQERR,1,-5,x", "REQOK,2", "ERROR,67,bad", "CONS,12", "SYNC,10", "CLIENTIP,1.2.3.4", "SERVNAME,x", "PROG,0",
        "NOOP,x", "PROBE", "LOOP,99999999999999999", "END,48,x", "CONERR,5,x", "MPNREG,d,a", "UNSUB,1",
        "CONOK,sid,99999999999999999,99999999999999999,host:99999", "SUBOK,3,99999999999999999,99999999999999999",
        "MSGFAIL,*,999999999999999999,39,999999999999999999", "OV,1,-5,-3", "EOS,1,-1",
    ]

    @Test func mutatedLinesNeverTrap() {
        var rng = SplitMix64(seed: 42)
        for round in 0..<300 {
            var h = EngineHarness { $0.sessionRecoveryTimeout = round % 2 == 0 ? 15_000 : 0 }
            h.connectWS()
            var s = spec(.command, items: ["i"], fields: ["key", "command", "f"])
            s.secondLevelFields = ["p"]
            h.send(.subscribe(key: 1, spec: spec(.merge, items: ["i"], fields: ["f1", "f2"])))
            h.send(.subscribe(key: 2, spec: s))
            for k in 1...3 { h.send(.sendMessage(key: 10 + k, msg("m\(k)", sequence: "s"))) }
            for _ in 0..<40 {
                var line = Array(Self.valid[Int(rng.next() % UInt64(Self.valid.count))].utf8)
                let edits = Int(rng.next() % 4)
                for _ in 0..<edits where !line.isEmpty {
                    let i = Int(rng.next() % UInt64(line.count))
                    switch rng.next() % 3 {
                    case 0: line[i] = UInt8(truncatingIfNeeded: rng.next())
                    case 1: line.remove(at: i)
                    default: line.insert(Array(",|^%#$-9".utf8)[Int(rng.next() % 8)], at: i)
                    }
                }
                let text = String(decoding: line, as: UTF8.self)
                let id = h.engine.stream?.connection ?? h.lastWebSocket ?? 1
                h.send(.lineReceived(id, text))
                if rng.next() % 10 == 0 { h.advance(Int64(rng.next() % 10_000)) }
                if rng.next() % 20 == 0, let ws = h.lastWebSocket { h.send(.webSocketOpened(ws)) }
            }
        }
    }
}
