import Testing

/// Anyone may ask for the `MONITOR` adapter set; only the administrator gets in. A flood of
/// refused logins over real sockets leaves nothing behind, and the administrator still logs in
/// and gets the `server` item afterwards.
///
/// 60,000 attempts: enough to kill a debug server with the access check that grew one level with
/// every attempt (`MonitorAccessCheckTests` is its in-process test). That server died after
/// 52,373 of them on 2026-12-01, 87-107 s into this test; the fixed one takes ~40 s.
@Suite(.serialized, .timeLimit(.minutes(3))) struct MonitorLoginFloodTests {
    static let password = "monitor-flood-secret"
    static let sockets = 4
    static let attemptsPerSocket = 15_000

    @Test func refusedMonitorLoginsLeaveNothingBehind() async throws {
        try await SpawnedServer.with(
            // Refused creates leave a WebSocket without a session: keep it open past the default
            // 15 s the front allows for that, which a slow run could reach.
            front: #"{"webSocketSessionTimeoutMillis": 120000}"#,
            admin: #"{"user": "admin", "password": "\#(Self.password)"}"#
        ) { server, group in
            let refusals = try await withThrowingTaskGroup(of: Int.self) { tasks in
                for socket in 0..<Self.sockets {
                    tasks.addTask {
                        let c = try await RawTestConnection.webSocket(port: server.port, group: group)
                        _ = await c.waitFor("HTTP/1.1 101")
                        var refused = 0
                        for attempt in 0..<Self.attemptsPerSocket where !c.isClosed {
                            c.forget()
                            // The administrator's name with wrong passwords, and other names.
                            let user = attempt.isMultiple(of: 2) ? "admin" : "guest\(socket)"
                            try? await c.wsText(
                                "create_session\r\nLS_cid=x&LS_adapter_set=MONITOR&LS_user=\(user)&LS_password=wrong\(attempt)")
                            await c.waitForAny(["CONERR,", "CONOK,"])
                            if c.text.contains("CONERR,1,") { refused += 1 }
                        }
                        await c.close()
                        return refused
                    }
                }
                return try await tasks.reduce(0, +)
            }
            #expect(server.process.isRunning, "the server died: \(server.log.suffix(2_000))")
            #expect(refusals == Self.sockets * Self.attemptsPerSocket, "refused \(refusals)")
            guard server.process.isRunning else { return }
            #expect(try await server.metric("lightstreamer_sessions_created_total", group: group) == 0)
            #expect(try await server.metric("lightstreamer_sessions_active", group: group) == 0)

            // The administrator is still let in, and gets the monitor's `server` row.
            let admin = try await RawTestConnection.webSocket(port: server.port, group: group)
            defer { Task { await admin.close() } }
            _ = await admin.waitFor("HTTP/1.1 101")
            try await admin.wsText(
                "create_session\r\nLS_cid=x&LS_adapter_set=MONITOR&LS_user=admin&LS_password=\(Self.password)&LS_send_sync=false")
            #expect(await admin.waitFor("CONOK,", seconds: 10), "\(admin.text.prefix(300))")
            try await admin.wsText(
                "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=server&LS_schema=connections&LS_snapshot=true")
            #expect(await admin.waitFor("U,1,1,", seconds: 15), "\(admin.text.suffix(300))")

            try await server.assertHealthy(after: "refused MONITOR logins", group: group)
        }
    }
}
