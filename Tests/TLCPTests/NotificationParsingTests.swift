import TLCP
import Testing

@Suite struct NotificationParsingTests {
    @Test(arguments: [
        ("CONOK,sid,70000,5000,*", TLCPNotification.conok(sessionId: "sid", requestLimit: 70000, keepaliveMillis: 5000, controlLink: "*")),
        (
            "CONOK,sid,70000,5000,host.com:90",
            .conok(sessionId: "sid", requestLimit: 70000, keepaliveMillis: 5000, controlLink: "host.com:90")
        ),
        ("CONERR,4,Recovery not possible", .conerr(code: 4, message: "Recovery not possible")),
        ("CONERR,-5,", .conerr(code: -5, message: "")),
        ("END,31,closed, by client", .end(code: 31, message: "closed, by client")),
        ("WSOK", .wsok),
        ("REQOK", .reqok(requestId: nil)),
        ("REQOK,12", .reqok(requestId: "12")),
        ("REQERR,1,-5,error", .reqerr(requestId: "1", code: -5, message: "error")),
        ("ERROR,67,bad request", .error(code: 67, message: "bad request")),
        ("SUBOK,1,2,2", .subok(subscriptionId: 1, itemCount: 2, fieldCount: 2)),
        ("SUBCMD,2,1,2,1,2", .subcmd(subscriptionId: 2, itemCount: 1, fieldCount: 2, keyPosition: 1, commandPosition: 2)),
        ("UNSUB,3", .unsub(subscriptionId: 3)),
        ("EOS,2,1", .endOfSnapshot(subscriptionId: 2, item: 1)),
        ("CS,2,1", .clearSnapshot(subscriptionId: 2, item: 1)),
        ("OV,1,1,12", .overflow(subscriptionId: 1, item: 1, lostCount: 12)),
        ("CONF,1,unlimited,filtered", .conf(subscriptionId: 1, maxFrequency: .unlimited, filtered: true)),
        ("CONF,1,2.5,unfiltered", .conf(subscriptionId: 1, maxFrequency: .limited(2.5), filtered: false)),
        ("MSGDONE,seq,1,result:ok", .msgdone(sequence: "seq", progressive: 1, response: "result:ok")),
        ("MSGDONE,*,1,", .msgdone(sequence: nil, progressive: 1, response: "")),
        ("MSGDONE,*,1", .msgdone(sequence: nil, progressive: 1, response: nil)),
        ("MSGFAIL,seq,3,39,2", .msgfail(sequence: "seq", progressive: 3, code: 39, message: "2")),
        ("MSGFAIL,*,2,-1,text=nick+242+I%C3%B1", .msgfail(sequence: nil, progressive: 2, code: -1, message: "text=nick+242+Iñ")),
        ("CONS,unlimited", .cons(.unlimited)),
        ("CONS,unmanaged", .cons(.unmanaged)),
        ("CONS,40.5", .cons(.kbps(40.5))),
        ("SYNC,12", .sync(seconds: 12)),
        ("CLIENTIP,127.0.0.1", .clientip("127.0.0.1")),
        ("SERVNAME,Lightstreamer HTTP Server", .servname("Lightstreamer HTTP Server")),
        ("PROG,100", .prog(100)),
        ("NOOP,sending placeholder data", .noop("sending placeholder data")),
        ("PROBE", .probe),
        ("LOOP,0", .loop(delayMillis: 0)),
        ("MPNREG,devid,adapter", .mpnreg(deviceId: "devid", adapterName: "adapter")),
        ("MPNZERO,devid", .mpnzero(deviceId: "devid")),
        ("MPNOK,3,sub3", .mpnok(subscriptionId: 3, mpnSubscriptionId: "sub3")),
        ("MPNCONF,sub3", .mpnconf(mpnSubscriptionId: "sub3")),
        ("MPNDEL,sub3", .mpndel(mpnSubscriptionId: "sub3")),
        ("FUTURE,a,b", .unknown(tag: "FUTURE", arguments: "a,b")),
    ])
    func parsesEveryTag(line: String, expected: TLCPNotification) throws {
        #expect(try TLCPNotification.parse(line) == expected)
        #expect(try TLCPNotification.parse(line + "\r\n") == expected)
    }

    @Test func mpnconfReadsTheFirstArgumentLikeOfficialClients() throws {
        #expect(try TLCPNotification.parse("MPNCONF,,sub3") == .mpnconf(mpnSubscriptionId: ""))
    }

    @Test func updateLineKeepsCommasInValues() throws {
        guard case .update(let u) = try TLCPNotification.parse("U,1,2,a,b|c") else {
            Issue.record("not U")
            return
        }
        #expect(u.subscriptionId == 1 && u.item == 2 && u.values == [.value("a,b"), .value("c")])
    }

    @Test(arguments: [
        "", ",", "CONOK", "CONOK,sid,70000,5000", "CONOK,sid,x,5000,*", "SUBOK,1,2", "SUBOK,a,2,2", "U,", "U,1", "U,1,",
        "U,a,1,x", "U,1,1,^Q", "U,1,1,%zz", "CONF,1,fast,filtered", "CONF,1,1,maybe", "CONS,wide", "LOOP,", "LOOP,-",
        "lower,1", "REQERR,1,2", "MSGFAIL,*,1,2", "CONERR,%ZZ,x", "SERVNAME,%E0%A4", "TOOLONGTAG,1",
    ])
    func malformedLinesAreTypedErrors(line: String) {
        #expect(throws: TLCPLineError.self) { try TLCPNotification.parse(line) }
    }

    @Test func dataNotificationsAreCountedAsSection55Says() throws {
        let data = [
            "SUBOK,1,1,1", "SUBCMD,1,1,2,1,2", "UNSUB,1", "U,1,1,a", "EOS,1,1", "CS,1,1", "OV,1,1,1", "CONF,1,unlimited,filtered",
            "MSGDONE,*,1,", "MSGFAIL,*,1,38,x", "MPNREG,d,a", "MPNZERO,d", "MPNOK,1,s", "MPNCONF,s", "MPNDEL,s",
        ]
        let other = [
            "CONOK,s,1,1,*", "CONERR,1,x", "END,1,x", "WSOK", "REQOK,1", "REQERR,1,1,x", "ERROR,1,x", "CONS,unlimited",
            "SYNC,1", "CLIENTIP,x", "SERVNAME,x", "PROG,1", "NOOP,x", "PROBE", "LOOP,0",
        ]
        for l in data { #expect(try TLCPNotification.parse(l).isDataNotification, "\(l)") }
        for l in other { #expect(try !TLCPNotification.parse(l).isDataNotification, "\(l)") }
    }

    @Test func versionGatedEncoding() {
        let done = TLCPNotification.msgdone(sequence: "s", progressive: 2, response: "ok")
        #expect(done.encoded(version: .v2_5) == "MSGDONE,s,2,ok")
        #expect(done.encoded(version: .v2_4) == "MSGDONE,s,2")
        #expect(TLCPNotification.msgdone(sequence: nil, progressive: 1, response: nil).encoded() == "MSGDONE,*,1,")
        #expect(TLCPNotification.reqerr(requestId: "1", code: 19, message: "a,b%").encodedLine() == "REQERR,1,19,a%2Cb%25\r\n")
    }

    @Test func lineSplitterHandlesPartialLines() throws {
        var s = LineSplitter(maxLineLength: 64)
        #expect(try s.append(Array("CONOK,s,1,".utf8)) == [])
        #expect(try s.append(Array("1,*\r\nPRO".utf8)) == ["CONOK,s,1,1,*"])
        #expect(try s.append(Array("BE\r\nLOOP,0\n".utf8)) == ["PROBE", "LOOP,0"])
        #expect(s.pendingByteCount == 0)
        #expect(throws: LineSplitter.LineTooLong.self) { try s.append([UInt8](repeating: 65, count: 100)) }
    }
}
