import Testing

@testable import LightstreamerServer

/// `LS_old_session` closes the named session only when it belongs to the same user in the same
/// adapter set: knowing another user's session id is not enough to end it.
@Suite(.timeLimit(.minutes(1))) struct OldSessionTests {
    @Test func onlyTheSameUserReplacesASession() async throws {
        try await FrontIntegrationTests.withServer { server, group in
            let port = try #require(server.port)
            func open(_ params: String) async throws -> (RawTestConnection, String) {
                let ws = try await RawTestConnection.webSocket(port: port, group: group)
                try await ws.wsText("create_session\r\nLS_cid=x&LS_adapter_set=DEMO&LS_send_sync=false&" + params)
                #expect(await ws.waitFor("CONOK,", seconds: 10), "\(ws.text)")
                let sid = ws.text.split(separator: "CONOK,").last?.split(separator: ",").first.map(String.init) ?? ""
                return (ws, sid)
            }
            let (alice, aliceSession) = try await open("LS_user=alice")
            let (mallory, _) = try await open("LS_user=mallory&LS_old_session=\(aliceSession)")
            let (anonymous, _) = try await open("LS_old_session=\(aliceSession)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(!alice.text.contains("END,"), "another user's create ended the session: \(alice.text)")
            #expect(server.sessionCount == 3)
            let (again, _) = try await open("LS_user=alice&LS_old_session=\(aliceSession)")
            #expect(await alice.waitFor("END,32,", seconds: 10), "the same user's create did not replace it")
            for c in [alice, mallory, anonymous, again] { await c.close() }
        }
    }
}
