import TLCP
import Testing

@testable import ARI

/// Lines a remote sends: real ones from the Python SDK 1.3.1 and the Node SDK 1.8.1, every
/// reply and error form, and broken input.
@Suite struct ARIRemoteLineTests {
    func decode(_ line: String) throws -> ARIRemoteLine { try ARIRemoteLine.decode(line) }

    func reply(_ id: String, _ method: ARIMethod, _ payload: ARIReplyPayload) -> ARIRemoteLine {
        .reply(ARIReply(id: id, method: method, outcome: .success(payload)))
    }

    @Test func pythonSessionLines() throws {
        guard
            case .remoteCredentials(let rac) = try decode(
                "1|RAC|S|user|S|rmt|S|password|S|s3cret%26%7Cx|S|enableClosePacket|S|true|S|SDK|S|Python+Adapter+SDK")
        else {
            Issue.record("RAC expected")
            return
        }
        #expect(rac.user == "rmt" && rac.password == "s3cret&|x" && rac.enableClosePacket && rac.sdk == "Python Adapter SDK")
        #expect(try decode("10|MPI|S|ARI.version|S|1.8.3") == reply("10", .metadataInit, .initialized(version: "1.8.3")))
        #expect(try decode("10|MPI|V") == reply("10", .metadataInit, .initialized(version: nil)))
        #expect(
            try decode("11|NUS|D|40.5|B|1")
                == reply("11", .notifyUser, .userAuthorization(maxBandwidth: 40.5, wantsTablesNotification: true)))
        #expect(try decode("12|NNS|V") == reply("12", .notifyNewSession, .void))
        #expect(try decode("13|GIS|S|feed1|S|nosnap2") == reply("13", .getItems, .names(["feed1", "nosnap2"])))
        #expect(try decode("13|GIS") == reply("13", .getItems, .names([])))
        #expect(try decode("14|GSC|S|bid|S|ask|S|time") == reply("14", .getSchema, .names(["bid", "ask", "time"])))
        #expect(
            try decode("15|GIT|I|10|D|2.5|M|RMDC|I|10|D|2.5|M|RMDC")
                == reply(
                    "15", .getItemData,
                    .itemData([
                        ARIItemData(distinctSnapshotLength: 10, minSourceFrequency: 2.5, modes: .all),
                        ARIItemData(distinctSnapshotLength: 10, minSourceFrequency: 2.5, modes: .all),
                    ])))
        #expect(
            try decode("16|GUI|I|5|D|1.5|M|MDC")
                == reply(
                    "16", .getUserItemData,
                    .userItemData([
                        ARIUserItemData(allowedBufferSize: 5, allowedMaxFrequency: 1.5, allowedModes: [.merge, .distinct, .command])
                    ])))
        #expect(try decode("31|SUB|V") == reply("31", .subscribe, .void))
        #expect(try decode("KEEPALIVE") == .keepalive)
        #expect(try decode("1795466804311|EOS|S|feed1|S|31") == .endOfSnapshot(item: "feed1", subscriptionId: "31"))
        #expect(try decode("1795466804511|CLS|S|feed1|S|31") == .clearSnapshot(item: "feed1", subscriptionId: "31"))
        #expect(
            try decode("19|NUM|EC|message+refused|-5|No+chat+for+you")
                == .reply(
                    ARIReply(
                        id: "19", method: .notifyUserMessage,
                        outcome: .failure(.credits(message: "message refused", code: -5, userMessage: "No chat for you")))))
        #expect(
            try decode("30|FAL|E|Unexpected+request+SUB+while+waiting+for+DPI+request")
                == .failure(message: "Unexpected request SUB while waiting for DPI request"))
    }

    @Test func updatesWithNullsEmptiesAndBytes() throws {
        let line = "1795466804311|UD3|S|feed1|S|31|B|1|S|bid|S|1.0|S|ask|S|1.1+x%7Cy%E2%82%AC|S|time|S|#|S|raw|Y|AP8="
        guard case .update(let u) = try decode(line) else {
            Issue.record("UD3 expected")
            return
        }
        #expect(u.item == "feed1" && u.subscriptionId == "31" && u.isSnapshot)
        #expect(
            u.fields == [
                ARIField("bid", .text("1.0")), ARIField("ask", .text("1.1 x|y€")), ARIField("time", .text(nil)),
                ARIField("raw", .bytes([0x00, 0xFF])),
            ])
        let map = u.fieldMap
        #expect(map["time"] == .some(nil))
        #expect(map["raw"] == .some("\u{0}ÿ"))
        guard case .update(let empty) = try decode("1|UD3|S|feed1|S|31|B|0|S|ask|S|$") else {
            Issue.record("UD3 expected")
            return
        }
        #expect(empty.fields == [ARIField("ask", .text(""))])
        guard case .update(let none) = try decode("1|UD3|S|feed1|S|31|B|0") else {
            Issue.record("UD3 expected")
            return
        }
        #expect(none.fields.isEmpty && !none.isSnapshot)
    }

    @Test func nodeDialectLines() throws {
        guard case .update(let u) = try decode("7|UD3|S|feed1|S|31|B|1|S|bid|S|1.0|S|ask|S|1.1 x%7Cy€%2B%25|S|time|S|#|S|hash|S|%23") else {
            Issue.record("UD3 expected")
            return
        }
        #expect(u.fields.map(\.value) == [.text("1.0"), .text("1.1 x|y€+%"), .text(nil), .text("#")])
        #expect(try decode("30|DPI|S|ARI.version|S|1.9.1") == reply("30", .dataInit, .initialized(version: "1.9.1")))
        #expect(try decode("12|NNS|I|3600") == reply("12", .notifyNewSession, .sessionTimeToLive(seconds: 3600)))
        #expect(
            try decode("17|NNT|B|1|B|0")
                == reply(
                    "17", .notifyNewTables,
                    .tablesNotificationOptions(enableUnsubscription: true, wantsFinalStatistics: false)))
        #expect(
            try decode("8|DFD|S|feed1|S|31|S|json|F|JM|S|text|F|$")
                == .diffOrders(
                    item: "feed1", subscriptionId: "31",
                    fields: [
                        ARIDiffOrder(field: "json", algorithms: [.jsonPatch, .diffMatchPatch]), ARIDiffOrder(field: "text", algorithms: []),
                    ]))
    }

    static let errors: [(ARIMethod, ARIErrorReply)] = [
        (.subscribe, .generic(message: "boom")), (.dataInit, .dataProvider(message: "bad params")),
        (.subscribe, .subscription(message: nil)), (.unsubscribe, .failure(message: "down")),
        (.metadataInit, .metadataProvider(message: "x")), (.notifyUserMessage, .notification(message: "n")),
        (.notifyUser, .access(message: "wrong password")), (.notifyUserAuth, .resourceUnavailable(message: "later")),
        (.getItems, .items(message: "no such group")), (.getSchema, .schema(message: "no such schema")),
        (.notifyNewSession, .credits(message: "m", code: -3, userMessage: nil)),
        (.notifyNewSession, .conflictingSession(message: "dup", code: -7, userMessage: "only one", sessionId: "S9")),
    ]

    @Test func everyErrorReplyRoundTrips() throws {
        for (i, (method, error)) in Self.errors.enumerated() {
            let r = ARIReply(id: String(i + 40), method: method, outcome: .failure(error))
            #expect(try decode(r.encode()) == .reply(r), "\(r.encode())")
        }
        #expect(
            ARIReply(
                id: "9", method: .notifyNewSession,
                outcome: .failure(.conflictingSession(message: "a b", code: -7, userMessage: nil, sessionId: "S9"))
            ).encode()
                == "9|NNS|EX|a%20b|-7|#|S9")
        // A bare marker is accepted as a message-less error.
        #expect(try decode("9|SUB|EU") == .reply(ARIReply(id: "9", method: .subscribe, outcome: .failure(.subscription(message: nil)))))
    }

    @Test func everySuccessReplyAndNotificationRoundTrips() throws {
        let lines: [ARIRemoteLine] = [
            .keepalive, .remoteCredentials(ARIRemoteCredentials(user: "u", password: "p|w", sdk: "Swift test")),
            reply("1", .dataInit, .initialized(version: "1.8.3")), reply("2", .metadataInit, .initialized(version: nil)),
            reply("3", .notifyUserAuth, .userAuthorization(maxBandwidth: 0, wantsTablesNotification: false)),
            reply("4", .getUserItemData, .userItemData([])), reply("5", .mpnDeviceAccess, .void),
            reply("6", .notifyTablesClose, .void),
            .update(
                ARIUpdate(
                    item: "i", subscriptionId: "10", isSnapshot: false,
                    fields: [ARIField("a", .bytes(nil)), ARIField("b", .bytes([])), ARIField("c", .text("$"))])),
            .failure(message: "adapter down"), .failure(message: nil),
        ]
        for line in lines {
            #expect(try decode(line.encode(timestamp: 123)) == line, "\(line.encode())")
        }
    }

    @Test func hostileAndMalformedLines() {
        let cases: [(String, ARIProtocolError)] = [
            ("", .emptyToken(index: 0)),
            ("keepalive", .missingMethod),
            ("5|WHAT", .unknownMethod("WHAT")),
            ("5|KEEPALIVE", .unexpectedMethod("KEEPALIVE")),
            ("0|CLOSE", .unexpectedMethod("CLOSE")),
            ("5|SUB", .missingArgument(expected: "V")),
            ("5|SUB|V|V", .trailingArguments(count: 1)),
            ("5|SUB|S|x", .unexpectedType(expected: "V", found: "S")),
            ("5|NUS|V", .unexpectedType(expected: "D", found: "V")),
            ("5|NUS|D|fast|B|1", .badValue(type: "D", value: "fast")),
            ("5|GIS|S|#", .badValue(type: "S", value: "# for name")),
            ("5|GIT|I|1|D|0", .missingArgument(expected: "M")),
            ("5|MPI|S|other|S|x", .missingArgument(expected: "ARI.version")),
            ("5|NUM|EC|m|lots|u", .badValue(type: "code", value: "lots")),
            ("5|NUM|EC|m|-1", .missingArgument(expected: "user message")),
            ("5|NUM|EZ|m", .badValue(type: "error", value: "EZ")),
            ("5|UD3|S|i|S|1|B|0|S|f|I|3", .unexpectedType(expected: "S or Y", found: "I")),
            ("5|UD3|S|i|S|1|B|0|S|f", .missingArgument(expected: "type")),
            ("5|UD3|S|i|S|1|B|2", .badValue(type: "B", value: "2")),
            ("5|UD3|S|i|S|1|B|0|S|f|Y|!!", .badValue(type: "Y", value: "!!")),
            ("5|UD3|S|i|S|1|B|0|S|f|S|%G0", .badEscape(offset: 0)),
            ("5|EOS|S|i", .missingArgument(expected: "S")),
            ("5|FAL|S|x", .missingArgument(expected: "E")),
            ("5|GIS|S|a||S|b", .emptyToken(index: 4)),
        ]
        for (line, error) in cases {
            #expect(throws: error, "\(line)") { try ARIRemoteLine.decode(line) }
        }
    }

    @Test func limitsApplyToDecoding() {
        let limits = ARILimits(maxLineLength: 64, maxTokens: 10)
        let many = "5|GIS" + String(repeating: "|S|a", count: 5)
        #expect(throws: ARIProtocolError.tooManyTokens(limit: 10)) { try ARIRemoteLine.decode(many, limits: limits) }
        let long = "5|GIS|S|" + String(repeating: "a", count: 64)
        #expect(throws: ARIProtocolError.lineTooLong(limit: 64)) { try ARIRemoteLine.decode(long, limits: limits) }
    }

    @Test func randomGarbageNeverTraps() {
        var rng = SplitMix(seed: 99)
        let pieces = [
            "|", "S", "V", "E", "EC", "UD3", "SUB", "GIT", "I", "D", "M", "Y", "#", "$", "%", "%2", "1", "-",
            "B", "NNT", "RAC", "KEEPALIVE", "€", "x", "9999999999999999999999", "AP8=", "F", "L", "P",
        ]
        var decoded = 0
        for _ in 0..<5000 {
            let n = Int(rng.next() % 14)
            let line = (0..<n).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
            if (try? ARIRemoteLine.decode(line)) != nil { decoded += 1 }
            _ = try? ARIProxyLine.decode(line, dialect: rng.next() % 2 == 0 ? .v1_8 : .v1_9)
        }
        // Some random lines are valid (e.g. `KEEPALIVE`); most are not.
        #expect(decoded < 5000)
    }
}
