import TLCP
import Testing

@Suite struct RequestParsingTests {
    func single(_ ws: String) throws -> TLCPRequest {
        let batch = try TLCPRequestParser.parseWebSocketMessage(ws)
        #expect(batch.requests.count == 1)
        return try #require(batch.requests.first).get()
    }

    @Test func wsCreateE1() throws {
        let r = try single("create_session\r\nLS_adapter_set=TEST&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false&LS_cause=api")
        guard case .createSession(let c) = r else {
            Issue.record("\(r)")
            return
        }
        #expect(c.adapterSet == "TEST")
        #expect(c.clientId == CreateSessionRequest.standardClientId)
        #expect(c.stream.sendSync == false && c.stream.cause == "api" && !c.stream.polling)
        #expect(c.comboOperations.isEmpty)
        // And the encoder writes the same line back (parameter order of official clients).
        #expect(
            TLCPRequestEncoder.webSocketMessage(r)
                == "create_session\r\nLS_adapter_set=TEST&LS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_send_sync=false&LS_cause=api")
    }

    @Test func wsokAndHeartbeat() throws {
        #expect(try single("wsok") == .wsok)
        #expect(try single("heartbeat\r\n\r\n") == .heartbeat(HeartbeatRequest(session: nil)))
        #expect(TLCPRequestEncoder.webSocketMessage(.heartbeat(HeartbeatRequest())) == "heartbeat\r\n\r\n")
        #expect(TLCPRequestEncoder.webSocketMessage(.heartbeat(HeartbeatRequest(session: "S"))) == "heartbeat\r\nLS_session=S")
        #expect(TLCPRequestEncoder.httpBody([.heartbeat(HeartbeatRequest())]) == "\r\n")
    }

    @Test func subscribeE2() throws {
        let r = try single(
            "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=i1%20i2&LS_schema=f1%20f2&LS_snapshot=true&LS_ack=false")
        let expected = ControlRequest(
            requestId: "1",
            operation: .add(SubscribeParameters(subscriptionId: 1, mode: .merge, group: "i1 i2", schema: "f1 f2", snapshot: .yes)),
            ack: false)
        #expect(r == .control(expected))
        #expect(
            TLCPRequestEncoder.webSocketMessage(r)
                == "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=i1%20i2&LS_schema=f1%20f2&LS_snapshot=true&LS_ack=false"
        )
    }

    @Test func mpnInternalItemSubscribeE4() throws {
        let r = try single(
            "control\r\nLS_reqId=2&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=DEV-devid&LS_schema=status%20status_timestamp&LS_data_adapter=adapter&LS_snapshot=true&LS_requested_max_frequency=unfiltered&LS_ack=false"
        )
        guard case .control(let c) = r, case .add(let s) = c.operation else {
            Issue.record("\(r)")
            return
        }
        #expect(s.dataAdapter == "adapter" && s.maxFrequency == .unfiltered && s.group == "DEV-devid")
        #expect(
            TLCPRequestEncoder.webSocketMessage(r).hasSuffix(
                "LS_data_adapter=adapter&LS_snapshot=true&LS_requested_max_frequency=unfiltered&LS_ack=false"))
    }

    @Test func mpnOperationsE5() throws {
        let activate = try single(
            "control\r\nLS_reqId=4&LS_op=activate&LS_subId=3&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_notificationFormat=fmt&PN_trigger=trg"
        )
        #expect(
            activate
                == .control(
                    ControlRequest(
                        requestId: "4",
                        operation: .mpnActivate(
                            MPNActivateParameters(
                                subscriptionId: 3, mode: .merge, group: "i1", schema: "f1", deviceId: "devid", notificationFormat: "fmt",
                                trigger: "trg")))))
        let reconf = try single(
            "control\r\nLS_reqId=5&LS_op=pn_reconf&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_subscriptionId=sub3&PN_trigger="
        )
        guard case .control(let rc) = reconf, case .mpnReconf(let p) = rc.operation else {
            Issue.record("\(reconf)")
            return
        }
        #expect(p.trigger == "" && p.notificationFormat == nil && p.mode == .merge)
        #expect(
            TLCPRequestEncoder.webSocketMessage(reconf)
                == "control\r\nLS_reqId=5&LS_op=pn_reconf&LS_mode=MERGE&LS_group=i1&LS_schema=f1&PN_deviceId=devid&PN_subscriptionId=sub3&PN_trigger="
        )
        #expect(
            try single("control\r\nLS_reqId=6&LS_op=deactivate&PN_deviceId=devid&PN_subscriptionId=sub3")
                == .control(ControlRequest(requestId: "6", operation: .mpnDeactivate(deviceId: "devid", target: .subscription("sub3")))))
        #expect(
            try single("control\r\nLS_reqId=7&LS_op=deactivate&PN_deviceId=devid&PN_subscriptionStatus=TRIGGERED")
                == .control(ControlRequest(requestId: "7", operation: .mpnDeactivate(deviceId: "devid", target: .status(.triggered)))))
        #expect(
            try single("control\r\nLS_reqId=8&LS_op=deactivate&PN_deviceId=devid")
                == .control(ControlRequest(requestId: "8", operation: .mpnDeactivate(deviceId: "devid", target: .all))))
        #expect(
            try single("control\r\nLS_reqId=9&LS_op=reset_badge&PN_deviceId=devid")
                == .control(ControlRequest(requestId: "9", operation: .mpnResetBadge(deviceId: "devid"))))
        #expect(
            try single(
                "control\r\nLS_reqId=1&LS_op=register&PN_type=Google&PN_appId=com.example.testapp&PN_deviceToken=tok&PN_newDeviceToken=tok2&LS_cause=refresh.token"
            )
                == .control(
                    ControlRequest(
                        requestId: "1",
                        operation: .mpnRegister(
                            MPNRegisterParameters(
                                platform: .google, applicationId: "com.example.testapp", deviceToken: "tok", newDeviceToken: "tok2")),
                        cause: "refresh.token")))
    }

    @Test func batchOfControlsAnsweredLineByLine() throws {
        let batch = try TLCPRequestParser.parseWebSocketMessage(
            "control\r\nLS_reqId=5&LS_op=delete&LS_subId=1\r\nLS_reqId=6&LS_op=frobnicate\r\nLS_op=delete&LS_subId=2\r\nLS_reqId=8&LS_op=reconf&LS_subId=3&LS_requested_max_frequency=2.5\r\n"
        )
        #expect(batch.requests.count == 4)
        #expect(try batch.requests[0].get() == .control(ControlRequest(requestId: "5", operation: .delete(subscriptionId: 1))))
        #expect(throws: TLCPRequestError(code: 65, message: "Unknown LS_op 'frobnicate'", requestId: "6")) { try batch.requests[1].get() }
        #expect(throws: TLCPRequestError(code: 67, message: "Missing parameter LS_reqId")) { try batch.requests[2].get() }
        #expect(
            try batch.requests[3].get()
                == .control(ControlRequest(requestId: "8", operation: .reconf(subscriptionId: 3, maxFrequency: .limited(2.5)))))
    }

    @Test func messagesE7() throws {
        #expect(
            try single("msg\r\nLS_reqId=1&LS_message=foo&LS_sequence=seq&LS_msg_prog=1")
                == .message(MessageRequest(requestId: "1", message: "foo", sequence: "seq", progressive: 1)))
        let ff = try single("msg\r\nLS_reqId=1&LS_message=foo&LS_outcome=false&LS_ack=false")
        #expect(ff == .message(MessageRequest(requestId: "1", message: "foo", ack: false, outcome: false)))
        #expect(TLCPRequestEncoder.webSocketMessage(ff) == "msg\r\nLS_reqId=1&LS_message=foo&LS_outcome=false&LS_ack=false")
        let waited = try single("msg\r\nLS_reqId=1&LS_message=foo&LS_outcome=false&LS_sequence=seq&LS_msg_prog=1&LS_max_wait=100")
        #expect(
            TLCPRequestEncoder.webSocketMessage(waited)
                == "msg\r\nLS_reqId=1&LS_message=foo&LS_outcome=false&LS_sequence=seq&LS_msg_prog=1&LS_max_wait=100")
        for bad in [
            "LS_reqId=1&LS_message=x&LS_sequence=UNORDERED_MESSAGES&LS_msg_prog=1", "LS_reqId=1&LS_message=x&LS_sequence=a-b&LS_msg_prog=1",
            "LS_reqId=1&LS_message=x&LS_sequence=s", "LS_reqId=1", "LS_reqId=1&LS_message=x&LS_msg_prog=0",
        ] {
            let batch = try TLCPRequestParser.parseWebSocketMessage("msg\r\n" + bad)
            #expect(throws: TLCPRequestError.self, "\(bad)") { try batch.requests[0].get() }
            if case .failure(let e) = batch.requests[0] { #expect(e.code == 65 && e.requestId == "1") }
        }
    }

    @Test func recoveryBindE6() throws {
        let body = "LS_session=sid&LS_recovery_from=0&LS_polling=true&LS_polling_millis=0&LS_idle_millis=0&LS_cause=ws.error"
        let batch = try TLCPRequestParser.parseHTTP(fileName: "bind_session.txt", query: "LS_protocol=TLCP-2.5.0", body: Array(body.utf8))
        #expect(batch.version == .v2_5 && batch.name == .bindSession)
        let r = try batch.requests[0].get()
        #expect(
            r
                == .bindSession(
                    BindSessionRequest(
                        session: "sid", recoveryFrom: 0,
                        stream: StreamParameters(polling: true, pollingMillis: 0, idleMillis: 0, cause: "ws.error"))))
        #expect(TLCPRequestEncoder.httpBody([r]) == body)
        // WS polling bind without LS_session (E10) is fine over WS, refused over HTTP.
        #expect(
            try single("bind_session\r\nLS_polling=true&LS_polling_millis=300&LS_idle_millis=15000")
                == .bindSession(BindSessionRequest(stream: StreamParameters(polling: true, pollingMillis: 300, idleMillis: 15000))))
        let noSession = try TLCPRequestParser.parseHTTP(
            fileName: "bind_session.txt", query: "LS_protocol=TLCP-2.5.0", body: Array("LS_polling=true".utf8))
        #expect(throws: TLCPRequestError.self) { try noSession.requests[0].get() }
    }

    @Test func httpControlTakesSessionFromTheQueryAndEitherContentType() throws {
        let body =
            "LS_reqId=1&LS_op=add&LS_subId=1&LS_mode=DISTINCT&LS_group=item&LS_schema=f1+f2&LS_snapshot=false\r\nLS_reqId=2&LS_op=constrain&LS_requested_max_bandwidth=unlimited"
        for contentType in ["text/plain; charset=utf-8", "application/x-www-form-urlencoded", nil] {
            let batch = try TLCPRequestParser.parseHTTP(
                fileName: "control.txt", query: "LS_protocol=TLCP-2.5.0&LS_session=sid", body: Array(body.utf8), contentType: contentType)
            #expect(batch.requests.count == 2)
            #expect(
                try batch.requests[0].get()
                    == .control(
                        ControlRequest(
                            requestId: "1", session: "sid",
                            operation: .add(
                                SubscribeParameters(subscriptionId: 1, mode: .distinct, group: "item", schema: "f1 f2", snapshot: .no)))))
            #expect(
                try batch.requests[1].get()
                    == .control(ControlRequest(requestId: "2", session: "sid", operation: .constrain(maxBandwidth: .unlimited))))
        }
        #expect(throws: TLCPRequestError.self) {
            try TLCPRequestParser.parseHTTP(
                fileName: "control.txt", query: "LS_protocol=TLCP-2.5.0", body: Array(body.utf8), contentType: "text/plain; charset=koi8-r")
        }
        // Latin-1 bodies decode byte for byte.
        let latin = try TLCPRequestParser.parseHTTP(
            fileName: "msg.txt", query: "LS_protocol=TLCP-2.5.0&LS_session=s", body: Array("LS_reqId=1&LS_message=".utf8) + [0xE9],
            contentType: "text/plain; charset=ISO-8859-1")
        #expect(try latin.requests[0].get() == .message(MessageRequest(requestId: "1", session: "s", message: "é")))
    }

    @Test func httpGetCarriesEverythingInTheQuery() throws {
        let batch = try TLCPRequestParser.parseHTTP(
            fileName: "create_session.txt",
            query:
                "LS_protocol=TLCP-2.5.0&LS_cid=x&LS_adapter_set=DEMO&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=item1&LS_schema=last_price",
            body: [UInt8]())
        guard case .createSession(let c) = try batch.requests[0].get() else {
            Issue.record("not create")
            return
        }
        #expect(c.adapterSet == "DEMO")
        #expect(c.comboOperations == [.add(SubscribeParameters(subscriptionId: 1, mode: .merge, group: "item1", schema: "last_price"))])
    }

    @Test func createComboOnSeveralLines() throws {
        let msg =
            "create_session\r\nLS_cid=x&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=a&LS_schema=b\r\nLS_op=add&LS_subId=2&LS_mode=RAW&LS_group=c&LS_schema=d"
        let r = try single(msg)
        guard case .createSession(let c) = r else {
            Issue.record("\(r)")
            return
        }
        #expect(c.comboOperations.count == 2)
        #expect(
            TLCPRequestEncoder.webSocketMessage(r)
                == "create_session\r\nLS_cid=x&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=a&LS_schema=b\r\nLS_op=add&LS_subId=2&LS_mode=RAW&LS_group=c&LS_schema=d"
        )
        let bad = try TLCPRequestParser.parseWebSocketMessage("create_session\r\nLS_cid=x\r\nLS_op=add&LS_subId=2")
        #expect(throws: TLCPRequestError.self) { try bad.requests[0].get() }
        if case .failure(let e) = bad.requests[0] { #expect(e.code == 64) }
    }

    @Test func requestLevelErrors() {
        #expect(throws: TLCPRequestError.self) { try TLCPRequestParser.parseWebSocketMessage("") }
        #expect(throws: TLCPRequestError.self) { try TLCPRequestParser.parseWebSocketMessage("launch_missiles\r\nx=1") }
        #expect(throws: TLCPRequestError.self) {
            try TLCPRequestParser.parseHTTP(fileName: "wsok.txt", query: "LS_protocol=TLCP-2.5.0", body: [UInt8]())
        }
        #expect(throws: TLCPRequestError.self) { try TLCPRequestParser.parseHTTP(fileName: "control.txt", query: "", body: [UInt8]()) }
        do {
            _ = try TLCPRequestParser.parseHTTP(fileName: "create_session.txt", query: "LS_protocol=TLCP-9.0", body: [UInt8]())
            Issue.record("accepted a bad protocol")
        } catch {
            #expect(error.code == 60)
        }
        #expect(throws: TLCPRequestError.self) {
            try TLCPRequestParser.parseHTTP(fileName: "control.txt", query: "LS_protocol=TLCP-2.5.0", body: [0xFF, 0xFE])
        }
    }

    @Test(arguments: [
        ("create_session\r\nLS_adapter_set=X", 65), // missing LS_cid
        ("create_session\r\nLS_cid=x&LS_polling=maybe", 65),
        ("create_session\r\nLS_cid=x&LS_content_length=-1", 65),
        ("create_session\r\nLS_cid=x&LS_supported_diffs=P,Q", 65),
        ("create_session\r\nLS_cid=%zz", 67),
        ("create_session\r\nLS_cid", 67),
        ("bind_session\r\nLS_session=s&LS_recovery_from=x", 65),
        ("control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=FAST&LS_group=a&LS_schema=b", 65),
        ("control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=&LS_schema=b", 65),
        ("control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=a&LS_schema=b&LS_snapshot=0", 65),
        ("control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=a&LS_schema=b&LS_requested_max_frequency=-1", 65),
        ("control\r\nLS_reqId=1&LS_op=register&PN_type=Windows&PN_appId=a&PN_deviceToken=t", 65),
        ("control\r\nLS_reqId=1&LS_op=deactivate&PN_deviceId=d&PN_subscriptionStatus=SLEEPING", 65),
        ("control\r\nLS_reqId=1&LS_op=destroy&LS_cause_code=x", 65),
        ("control\r\n=1", 67),
    ])
    func parameterErrorsCarryTheRightCode(message: String, code: Int) throws {
        let batch = try TLCPRequestParser.parseWebSocketMessage(message)
        guard case .failure(let e) = batch.requests[0] else {
            Issue.record("accepted \(message)")
            return
        }
        #expect(e.code == code, "\(message): \(e)")
    }

    @Test func unknownParametersAreTolerated() throws {
        let r = try single("control\r\nLS_reqId=1&LS_op=delete&LS_subId=4&LS_future_thing=1&X=y")
        #expect(r == .control(ControlRequest(requestId: "1", operation: .delete(subscriptionId: 4))))
    }

    @Test func httpTargets() {
        #expect(TLCPRequestEncoder.httpTarget(name: .createSession) == "/lightstreamer/create_session.txt?LS_protocol=TLCP-2.5.0")
        #expect(
            TLCPRequestEncoder.httpTarget(name: .control, prefix: "/Prefix", session: "S1")
                == "/Prefix/lightstreamer/control.txt?LS_protocol=TLCP-2.5.0&LS_session=S1")
    }
}
