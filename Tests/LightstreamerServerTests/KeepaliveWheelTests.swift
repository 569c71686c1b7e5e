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
                // Taken before the request: the server writes CONOK after it, and each PROBE a
                // keepalive after its previous write. (Taken when CONOK was read, a loaded
                // machine's late read made a PROBE look early once.)
                let sent = ContinuousClock.now
                try await ws.wsText(
                    "create_session\r\nLS_adapter_set=DEMO&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false&LS_keepalive_millis=1000"
                )
                #expect(await ws.waitFor("CONOK,", seconds: 20))
                streams.append((ws, sent))
            }
            // Every stream's timer is on the wheel, not an event-loop task of its own.
            #expect(server.manager.keepaliveTimersPending >= 20, "\(server.manager.keepaliveTimersPending) timers on the wheels")
            try await Task.sleep(for: .milliseconds(900))
            for (ws, sent) in streams {
                // No PROBE may have come before a keepalive since the request.
                #expect(
                    !ws.text.contains("PROBE") || ContinuousClock.now - sent >= .milliseconds(1_000),
                    "a PROBE before the keepalive: \(ws.text.debugDescription)")
            }
            try await Task.sleep(for: .milliseconds(4_100))
            for (ws, sent) in streams {
                // At most one PROBE per keepalive since the request (none early), and they keep
                // coming.
                let probes = ws.text.components(separatedBy: "PROBE").count - 1
                let elapsed = ContinuousClock.now - sent
                let most = Int(elapsed / .milliseconds(1_000))
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
            // A keepalive and a SYNC timer per stream, both on the wheel. Read until seen: while
            // the wheel fires a slot, its entries are out until their sessions re-arm them (a
            // single read during a tick once saw 8 of 10 under CI load).
            let deadline = ContinuousClock.now + .seconds(5)
            while server.manager.keepaliveTimersPending < 2 * streams.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(
                server.manager.keepaliveTimersPending >= 2 * streams.count, "\(server.manager.keepaliveTimersPending) timers on the wheels")
            for ws in streams {
                #expect(await ws.waitFor("SYNC,", seconds: 10), "no SYNC: \(ws.text.debugDescription)")
            }
            for ws in streams { await ws.close() }
        }
    }
}
