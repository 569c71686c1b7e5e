import NIOConcurrencyHelpers
import NIOEmbedded
import Testing

@testable import LightstreamerServer

/// `OutboundQueue`: what sessions push reaches the channel's loop in order, in one drain per
/// hop, with consecutive texts joined and a stream's last text and its end together.
@Suite struct OutboundQueueTests {
    private func drained(
        transport: TransportKind = .http, byteLimit: Int = .max, _ pushes: (OutboundQueue) -> Void
    ) -> [[String]] {
        let loop = EmbeddedEventLoop()
        let drains = NIOLockedValueBox<[[String]]>([])
        let queue = CallbackOutboundQueue(
            connectionID: ConnectionIDs.next(), transport: transport, eventLoop: loop, byteLimit: byteLimit
        ) { ops in
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

    /// As a connection: an HTTP response counts each reply against its batch (a missing line
    /// too); a WebSocket writes a reply's line like any text, and nothing for a missing one.
    @Test func repliesAsEachTransportAnswersThem() {
        let send: (OutboundQueue) -> Void = { q in
            q.send("U,1\r\n")
            q.reply(index: 0, line: "REQOK,1")
            q.reply(index: 1, line: nil)
            q.send("LOOP,0\r\n", thenEndStream: false)
        }
        #expect(drained(transport: .http, send) == [["text:U,1\r\n", "reply:0:REQOK,1", "reply:1:-", "text:LOOP,0\r\n", "end:false"]])
        #expect(drained(transport: .webSocket, send) == [["text:U,1\r\nREQOK,1\r\nLOOP,0\r\n", "end:false"]])
    }

    @Test func aPushAfterADrainSchedulesAnother() {
        let loop = EmbeddedEventLoop()
        let drains = NIOLockedValueBox(0)
        let queue = CallbackOutboundQueue(connectionID: ConnectionIDs.next(), transport: .http, eventLoop: loop) { _ in
            drains.withLockedValue { $0 += 1 }
        }
        queue.push(.text("x"))
        loop.run()
        queue.push(.end(closeSocket: false))
        loop.run()
        #expect(drains.withLockedValue { $0 } == 2)
    }

    /// A loop that does not come round while a session writes: past the limit the queue stops
    /// taking text, and what the drain gets is over the limit, so that the connection's
    /// `BacklogGuard` closes it (as it would the same bytes written behind a full socket).
    @Test func pastItsByteLimitTheQueueDropsTextAndTheDrainIsOverTheLimit() {
        let line = String(repeating: "x", count: 98) + "\r\n"
        let result = drained(byteLimit: 1_000) { q in
            for _ in 0..<10_000 { q.send(line) }
            q.reply(index: 0, line: "REQOK,1")
            q.endStream(closeSocket: false)
        }
        #expect(result.count == 1)
        let texts = result.first?.filter { $0.hasPrefix("text:") } ?? []
        let bytes = texts.reduce(0) { $0 + $1.utf8.count - "text:".utf8.count }
        // Eleven lines: the one that passed the limit is kept, the 9,989 after it are not.
        #expect(bytes == 1_100)
        #expect(result.first?.last == "end:false", "an end is never dropped: \(result.first?.suffix(2) ?? [])")
        #expect(!(result.first?.contains { $0.hasPrefix("reply:") } ?? true))
        #expect(BacklogGuard.wouldExceed(isWritable: true, incoming: bytes, limit: 1_000) { nil })
        #expect(!BacklogGuard.wouldExceed(isWritable: true, incoming: 900, limit: 1_000) { nil })
    }

    /// `refusal` answers at once where `fits` says the write is within bounds: wherever it
    /// does, the answer is nil and the share is left as it was, and no write that `refusal`
    /// would refuse fits.
    @Test func whatFitsIsNeverRefused() {
        let budget = BacklogBudget(limit: 64 * 1024)
        let high = BacklogGuard.highWaterMark
        for limit in [0, 1, high - 1, high, high + 1, 2 * high, 1 << 20] {
            for incoming in [0, 1, 100, high, limit - high - 1, limit - high, limit - high + 1, limit, limit + 1] where incoming >= 0 {
                for isWritable in [true, false] {
                    for buffered in [nil, 0, high, 4 * high] as [Int?] {
                        var share = BacklogBudgetShare()
                        let refusal = BacklogGuard.refusal(
                            incoming: incoming, isWritable: isWritable, limit: limit, share: &share, budget: budget,
                            buffered: { buffered })
                        if BacklogGuard.fits(incoming: incoming, isWritable: isWritable, limit: limit) {
                            #expect(refusal == nil, "\(incoming) of \(limit), buffered \(String(describing: buffered))")
                            #expect(share.taken == 0)
                        }
                        share.giveBack(to: budget)
                    }
                }
            }
        }
        // Not everything fits: the check is not trivially true.
        #expect(!BacklogGuard.fits(incoming: 1, isWritable: false, limit: 1 << 20))
        #expect(!BacklogGuard.fits(incoming: 1 << 20, isWritable: true, limit: 1 << 20))
        #expect(BacklogGuard.fits(incoming: 100, isWritable: true, limit: 1 << 20))
    }

    /// The drain empties the count: the next pushes are taken again.
    @Test func afterTheDrainTheQueueTakesTextAgain() {
        let loop = EmbeddedEventLoop()
        let texts = NIOLockedValueBox<[Int]>([])
        let queue = CallbackOutboundQueue(connectionID: ConnectionIDs.next(), transport: .http, eventLoop: loop, byteLimit: 100) {
            ops in
            let n = ops.reduce(0) { n, op in if case .text(let t) = op { n + t.utf8.count } else { n } }
            texts.withLockedValue { $0.append(n) }
        }
        for _ in 0..<50 { queue.send("0123456789") }
        loop.run()
        for _ in 0..<5 { queue.send("0123456789") }
        loop.run()
        #expect(texts.withLockedValue { $0 } == [110, 50])
    }
}
