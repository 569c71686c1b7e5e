import NIOCore
import NIOPosix
import Testing

@testable import LightstreamerServer

/// Keepalive timers fire from one wheel per event loop (`KeepaliveWheel`): idle streams still
/// get their PROBEs, never before the keepalive has passed, and cancelled or re-armed timers
/// leave no growing backlog in the wheel.
@Suite(.timeLimit(.minutes(1))) struct KeepaliveWheelTests {
    @Test func idleStreamsGetTheirProbesFromTheWheelNeverEarly() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let port = try #require(server.port)
            var streams: [(RawTestConnection, ContinuousClock.Instant)] = []
            for _ in 0..<20 {
                let ws = try await RawTestConnection.webSocket(port: port, group: group)
                try await ws.wsText(
                    "create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false&LS_keepalive_millis=1000"
                )
                #expect(await ws.waitFor("CONOK,", seconds: 20))
                streams.append((ws, ContinuousClock.now))
            }
            // Every stream's timer is on the wheel, not an event-loop task of its own.
            #expect(server.manager.keepaliveTimersPending >= 20, "\(server.manager.keepaliveTimersPending) timers on the wheels")
            try await Task.sleep(for: .milliseconds(900))
            for (ws, conok) in streams {
                // CONOK was read after it was written: no PROBE may have come before a keepalive.
                #expect(
                    !ws.text.contains("PROBE") || ContinuousClock.now - conok >= .milliseconds(1_000),
                    "a PROBE before the keepalive: \(ws.text.debugDescription)")
            }
            try await Task.sleep(for: .milliseconds(4_100))
            for (ws, conok) in streams {
                // At most one PROBE per keepalive since CONOK (none early; one more for the
                // time CONOK took to be read), and they keep coming.
                let probes = ws.text.components(separatedBy: "PROBE").count - 1
                let elapsed = ContinuousClock.now - conok
                let most = Int(elapsed / .milliseconds(1_000)) + 1
                #expect(probes >= 2 && probes <= most, "\(probes) PROBEs in \(elapsed) at a 1 s keepalive: \(ws.text.debugDescription)")
            }
            // One live timer per stream: re-arming does not pile entries up.
            let pending = server.manager.keepaliveTimersPending
            #expect(pending >= streams.count && pending <= 2 * streams.count, "\(pending) timers on the wheels")
            for (ws, _) in streams { await ws.close() }
        }
    }
}

/// `SYNC` timers go on the same wheel: a stream that asked for them gets its `SYNC`s, and its
/// timer is a wheel entry rather than an event-loop task.
@Suite(.timeLimit(.minutes(1))) struct SyncWheelTests {
    @Test func syncsComeFromTheWheel() async throws {
        try await FrontIntegrationTests.withServer(configure: { $0.sessions.syncIntervalMillis = 1_000 }) { server, group in
            let port = try #require(server.port)
            var streams: [RawTestConnection] = []
            for _ in 0..<5 {
                let ws = try await RawTestConnection.webSocket(port: port, group: group)
                try await ws.wsText(
                    "create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=true&LS_keepalive_millis=20000"
                )
                #expect(await ws.waitFor("CONOK,", seconds: 20))
                streams.append(ws)
            }
            // A keepalive and a SYNC timer per stream, both on the wheel.
            #expect(
                server.manager.keepaliveTimersPending >= 2 * streams.count, "\(server.manager.keepaliveTimersPending) timers on the wheels")
            for ws in streams {
                #expect(await ws.waitFor("SYNC,", seconds: 10), "no SYNC: \(ws.text.debugDescription)")
            }
            for ws in streams { await ws.close() }
        }
    }
}
