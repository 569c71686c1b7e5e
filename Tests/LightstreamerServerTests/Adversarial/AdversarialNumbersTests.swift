import Testing

/// Hostile numbers over real sockets against the spawned server: each attack, then the server
/// is alive, its memory bounded, and a fresh session gets updates.
@Suite(.serialized, .timeLimit(.minutes(3))) struct AdversarialNumbersTests {
    static let create = "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0"

    /// The request that used to kill the process (a millisecond count overflowing a deadline),
    /// over HTTP and WS, on create and on bind.
    @Test func hugeInactivityMillis() async throws {
        try await SpawnedServer.with { server, group in
            let http = try await RawTestConnection.post(
                port: server.port, group: group, path: Self.create,
                body: "LS_cid=x&LS_adapter_set=DEMO&LS_inactivity_millis=99999999999999")
            #expect(await http.waitFor("CONOK,", seconds: 10), "\(http.text)")
            await http.close()
            let ws = try await RawTestConnection.webSocket(port: server.port, group: group)
            try await ws.wsText(
                "create_session\r\nLS_cid=x&LS_adapter_set=DEMO&LS_inactivity_millis=999999999999999999&LS_keepalive_millis=999999999999999999"
            )
            #expect(await ws.waitFor("CONOK,", seconds: 10), "\(ws.text)")
            let sid = ws.text.split(separator: "CONOK,").last?.split(separator: ",").first.map(String.init) ?? ""
            // Granted keepalive within the server's bounds, not the client's number.
            #expect(!ws.text.contains("999999999999999999"))
            await ws.close()
            let bind = try await RawTestConnection.webSocket(port: server.port, group: group)
            try await bind.wsText(
                "bind_session\r\nLS_session=\(sid)&LS_inactivity_millis=999999999999999999&LS_polling_millis=999999999999999999&LS_idle_millis=999999999999999999&LS_content_length=999999999999999999"
            )
            #expect(await bind.waitFor("CONOK,", seconds: 10), "\(bind.text)")
            await bind.close()
            try await server.assertHealthy(after: "LS_inactivity_millis=99999999999999", group: group)
        }
    }

    /// A message waiting for a missing progressive with a huge `LS_max_wait`.
    @Test func hugeMaxWait() async throws {
        try await SpawnedServer.with { server, group in
            let ws = try await RawTestConnection.webSocket(port: server.port, group: group)
            try await ws.wsText("create_session\r\nLS_cid=x&LS_adapter_set=DEMO&LS_send_sync=false")
            #expect(await ws.waitFor("CONOK,", seconds: 10))
            try await ws.wsText("msg\r\nLS_reqId=1&LS_message=CHAT%7Chi&LS_sequence=S&LS_msg_prog=2&LS_max_wait=999999999999999999")
            #expect(await ws.waitFor("REQOK,1", seconds: 10), "\(ws.text)")
            try await ws.wsText("msg\r\nLS_reqId=2&LS_message=CHAT%7Chi&LS_sequence=T&LS_msg_prog=999999999999999999&LS_max_wait=0")
            // Progressives 1…999999999999999998 skipped at once (39 with the count), no loop over them.
            #expect(await ws.waitFor("MSGFAIL,T,999999999999999998,39,999999999999999998", seconds: 10), "\(ws.text)")
            try await server.assertHealthy(after: "LS_max_wait=999999999999999999", group: group)
            await ws.close()
        }
    }

    /// Every numeric parameter at and past its bounds: negative, zero, huge, too long, NaN-like
    /// text. Each gets an answer (accepted within bounds, or the protocol's error).
    @Test func numbersAtAndPastEveryBound() async throws {
        let values = [
            "-1", "0", "1", "-0", "+5", " 5", "5 ", "0x10", "NaN", "nan", "inf", "-inf", "1e400", "1.5",
            "999999999999999999", "-999999999999999999", "9223372036854775807", "9223372036854775808",
            "99999999999999999999999999999999", "", "%00", "%FF",
            // At and past the 400 characters a decimal may have.
            String(repeating: "9", count: 400), String(repeating: "9", count: 401),
        ]
        let createParams = [
            "LS_inactivity_millis", "LS_keepalive_millis", "LS_polling_millis", "LS_idle_millis",
            "LS_content_length", "LS_requested_max_bandwidth", "LS_ttl_millis",
        ]
        let subscribeParams = ["LS_subId", "LS_requested_max_frequency", "LS_requested_buffer_size", "LS_snapshot"]
        try await SpawnedServer.with { server, group in
            for param in createParams {
                let ws = try await RawTestConnection.webSocket(port: server.port, group: group)
                for v in values {
                    try await ws.wsText("create_session\r\nLS_cid=x&LS_adapter_set=DEMO&LS_polling=true&\(param)=\(v)")
                }
                // One answer per create: a session (then LOOP: polling ends the stream) or CONERR.
                let deadline = ContinuousClock.now + .seconds(15)
                while ContinuousClock.now < deadline, Self.answers(ws.text) < values.count {
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(Self.answers(ws.text) == values.count, "\(param): \(ws.text.suffix(800))")
                // A granted bandwidth is written in plain digits, which clients read.
                for cons in ws.text.split(separator: "\r\n") where cons.hasPrefix("CONS,") {
                    #expect(cons.dropFirst(5).allSatisfy { $0.isNumber || $0 == "." } || cons == "CONS,unlimited", "\(cons)")
                }
                await ws.close()
            }
            let ws = try await RawTestConnection.webSocket(port: server.port, group: group)
            try await ws.wsText("create_session\r\nLS_cid=x&LS_adapter_set=DEMO&LS_send_sync=false")
            #expect(await ws.waitFor("CONOK,", seconds: 10))
            var reqId = 0
            for param in subscribeParams {
                for v in values {
                    reqId += 1
                    let subId = param == "LS_subId" ? v : String(1_000 + reqId)
                    var line = "LS_reqId=\(reqId)&LS_op=add&LS_mode=\(param == "LS_snapshot" ? "DISTINCT" : "MERGE")"
                    line += "&LS_group=item1&LS_schema=last_price"
                    if param != "LS_subId" { line += "&LS_subId=\(subId)" }
                    line += "&\(param)=\(v)"
                    try await ws.wsText("control\r\n" + line)
                }
            }
            let expected = reqId
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline, Self.controlAnswers(ws.text) < expected {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(Self.controlAnswers(ws.text) == expected, "\(ws.text.suffix(800))")
            try await server.assertHealthy(after: "numbers at and past every bound", group: group)
            await ws.close()
        }
    }

    static func answers(_ text: String) -> Int {
        text.components(separatedBy: "CONOK,").count - 1 + text.components(separatedBy: "CONERR,").count - 1
    }

    static func controlAnswers(_ text: String) -> Int {
        // REQERR for a request whose id could be read, ERROR for one that could not be decoded at all.
        text.components(separatedBy: "REQOK,").count - 1 + text.components(separatedBy: "REQERR,").count - 1
            + text.components(separatedBy: "ERROR,").count - 1
    }
}
