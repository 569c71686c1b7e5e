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
            var m = server.metrics.snapshot
            var still = (bytes: m.bytesSent, since: ContinuousClock.now)
            while ContinuousClock.now < deadline, m.slowClientsClosed == 0 {
                try await Task.sleep(for: .milliseconds(100))
                m = server.metrics.snapshot
                if m.bytesSent != still.bytes || m.bytesSent == 0 {
                    still = (m.bytesSent, ContinuousClock.now)
                } else if ContinuousClock.now - still.since >= .seconds(3) {
                    break
                }
            }
            #expect(ContinuousClock.now - still.since >= .seconds(3), "bytes written still growing: \(m.bytesSent)")
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
}
