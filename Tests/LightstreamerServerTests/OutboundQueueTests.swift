import NIOConcurrencyHelpers
import NIOEmbedded
import Testing

@testable import LightstreamerServer

/// `OutboundQueue`: what sessions push reaches the channel's loop in order, in one drain per
/// hop, with consecutive texts joined and a stream's last text and its end together.
@Suite struct OutboundQueueTests {
    private func drained(_ pushes: (OutboundQueue) -> Void) -> [[String]] {
        let loop = EmbeddedEventLoop()
        let drains = NIOLockedValueBox<[[String]]>([])
        let queue = OutboundQueue(eventLoop: loop) { ops in
            let described = ops.map { op -> String in
                switch op {
                case .text(let t): return "text:\(t)"
                case .end(let close): return "end:\(close)"
                case .reply(let index, let line): return "reply:\(index):\(line ?? "-")"
                }
            }
            drains.withLockedValue { $0.append(described) }
        }
        pushes(queue)
        loop.run()
        return drains.withLockedValue { $0 }
    }

    @Test func textsPushedBeforeTheLoopRunsAreOneDrainAndJoin() {
        let result = drained { q in
            q.push(.text("a\r\n"))
            q.push(.text("b\r\n"))
            q.push(.reply(index: 1, line: "REQOK"))
            q.push(.text("c\r\n"), .end(closeSocket: true))
        }
        #expect(result == [["text:a\r\nb\r\n", "reply:1:REQOK", "text:c\r\n", "end:true"]])
    }

    @Test func aPushAfterADrainSchedulesAnother() {
        let loop = EmbeddedEventLoop()
        let drains = NIOLockedValueBox(0)
        let queue = OutboundQueue(eventLoop: loop) { _ in drains.withLockedValue { $0 += 1 } }
        queue.push(.text("x"))
        loop.run()
        queue.push(.end(closeSocket: false))
        loop.run()
        #expect(drains.withLockedValue { $0 } == 2)
    }
}
