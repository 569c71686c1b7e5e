import NIOCore
import NIOPosix
import Testing

@testable import LightstreamerServer

/// A reader that never reads while its item updates fast (8 KB values, 1,000 a second) is
/// bounded in bytes, not only in time. With RAW, whose every update the session owes, the
/// updates go on being written once its socket is full: the connection is closed once the
/// unsent bytes pass `maxBacklogBytes` (long before `maxUndrainedMillis`), and the session,
/// left unbound and still owing every update, once that passes the same bound. With MERGE,
/// the session stops writing while the socket is full and folds each item's updates into the
/// latest (`ServerSession.outputBlocked`): the bytes stop growing, nothing is closed for its
/// backlog, and the connection waits for the client to read (up to `maxUndrainedMillis`).
// Two minutes: beside the whole suite the flood task gets little CPU, and the RAW case took
// 36 s to fill its socket and backlog there (6 s alone).
@Suite(.timeLimit(.minutes(2))) struct SlowReaderTests {
    @Test(arguments: ["RAW", "MERGE"]) func aReaderThatNeverReadsIsBoundedInBytes(mode: String) async throws {
        let rig = try await FrontBackpressureTests.MuteFlood.start(mode: mode) {
            $0.sessions.maxUndrainedMillis = 120_000
            $0.sessions.maxBacklogBytes = 2 << 20
            $0.sessions.sessionRecoveryMillis = 120_000
        }
        let server = rig.server

        let deadline = ContinuousClock.now + .seconds(90)
        if mode == "MERGE" {
            // 8 MB a second of updates: written unfolded, they would pass maxBacklogBytes
            // within a second. Held, the bytes written stop growing once the socket is full.
            let (held, m) = try await rig.waitForWritesToStop(within: .seconds(90), still: .seconds(3))
            #expect(held, "bytes written still growing: \(m.bytesSent)")
            #expect(m.bytesSent < 8 << 20, "\(m.bytesSent) bytes written to a client that reads nothing")
            #expect(m.slowClientsClosed == 0, "the connection was closed for a backlog that folding should have kept away")
            #expect(m.connectionsOpen == 1)
            #expect(m.sessionsClosedForBacklog == 0)
            #expect(server.sessionCount == 1)
        } else {
            while ContinuousClock.now < deadline {
                let m = server.metrics.snapshot
                if m.slowClientsClosed >= 1, m.sessionsClosedForBacklog >= 1 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            let m = server.metrics.snapshot
            #expect(m.slowClientsClosed == 1, "the connection was not closed for its backlog")
            #expect(m.connectionsOpen == 0)
            #expect(m.sessionsClosedForBacklog == 1, "the session was not closed for its backlog")
            #expect(server.sessionCount == 0)
        }
        await rig.stop()
    }

    /// Each connection is bounded by `maxBacklogBytes`; all of them together by
    /// `maxTotalBacklogBytes` (`BacklogBudget`). Here one RAW reader's own bound is 64 MiB and
    /// the server's 256 KiB: the connection is closed once what was written to it while its
    /// socket was full passes the server's bound, long before its own, and gives its share
    /// back.
    @Test(arguments: FrontBackpressureTests.StreamTransport.allCases)
    func theServerWideBudgetClosesASlowReaderBeforeItsOwnBound(transport: FrontBackpressureTests.StreamTransport) async throws {
        let rig = try await FrontBackpressureTests.MuteFlood.start(mode: "RAW", transport: transport) {
            $0.sessions.maxUndrainedMillis = 120_000
            $0.sessions.maxBacklogBytes = 64 << 20
            $0.sessions.maxTotalBacklogBytes = 256 << 10
            $0.sessions.sessionRecoveryMillis = 120_000
        }
        let server = rig.server
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline, server.metrics.snapshot.slowClientsClosed == 0 {
            try await Task.sleep(for: .milliseconds(20))
        }
        let m = server.metrics.snapshot
        #expect(m.slowClientsClosed == 1, "the connection was not closed")
        #expect(m.slowClientsOverBudget == 1, "closed for its own backlog, not the server's")
        // The kernel's buffers (the client's window and 16 KiB unsent), the budget and a drain or two (the session
        // writes from the producer's thread while the loop comes round), not the connection's
        // 64 MiB.
        #expect(m.bytesSent < 60 << 20, "\(m.bytesSent) bytes written before the connection was closed")
        await waitUntil { server.manager.backlogBudget.inUse == 0 }
        #expect(server.manager.backlogBudget.inUse == 0, "the closed connection kept its share")
        // The session knows its stream is gone (it waits for a recovery bind) rather than
        // writing on to a response nobody drains.
        let session = try #require(server.manager.allSessions.first)
        await waitUntil { session.boundConnection == nil }
        #expect(session.boundConnection == nil, "the session is still bound to the closed connection")
        await rig.stop()
    }

    @Test func aBudgetShareTakesUpToTheLimitAndGivesAllBack() {
        let budget = BacklogBudget(limit: 1_000)
        var a = BacklogBudgetShare()
        var b = BacklogBudgetShare()
        let first = a.take(600, from: budget)
        let tooMuch = b.take(500, from: budget)
        let rest = b.take(400, from: budget)
        #expect(first && !tooMuch && rest, "600, then 500 (passes 1,000), then 400")
        #expect(budget.inUse == 1_000)
        let oneMore = a.take(1, from: budget)
        #expect(!oneMore)
        a.giveBack(to: budget)
        #expect(budget.inUse == 400 && a.taken == 0)
        let again = b.take(600, from: budget)
        let huge = b.take(Int.max, from: budget)
        #expect(again && !huge, "more than 32 bits in one share fails")
        b.giveBack(to: budget)
        #expect(budget.inUse == 0)
        // A share set to what the connection holds: up, down, and past the budget.
        let up = a.hold(700, in: budget)
        let down = a.hold(200, in: budget)
        #expect(up && down && a.taken == 200 && budget.inUse == 200)
        let over = a.hold(1_001, in: budget)
        #expect(!over && a.taken == 200, "a hold past the budget keeps the share as it was")
        a.giveBack(to: budget)
        #expect(budget.inUse == 0)
    }
}
