import TLCP
import Testing

@testable import ARI

@Suite struct ARIRequestTests {
    static let table = ARITableInfo(
        windowIndex: 1, mode: .merge, group: "feed1 nosnap2", dataAdapter: "QUOTES",
        schema: "bid ask time", firstItemIndex: 1, lastItemIndex: 2, selector: nil,
        items: ["feed1", "nosnap2"])
    static let device = ARIMPNDevice(platform: .apple, applicationId: "com.example.app", deviceToken: "0a1b")

    static let every: [ARIRequest] = [
        .dataInit(ARIInitParameters(keepaliveHintMillis: 3000, adapterSet: "DEMO", dataAdapter: "QUOTES", serverInstanceId: "s1")),
        .metadataInit(
            ARIInitParameters(
                keepaliveHintMillis: nil, adapterSet: "DEMO", dataAdapter: nil, serverInstanceId: nil,
                custom: [ARIPair("remote:color", "blue"), ARIPair("remote:none", nil)])),
        .subscribe(item: "feed1"), .unsubscribe(item: "a|b c"),
        .notifyUser(user: "user1", password: "s3cret&|x", headers: [ARIPair("host", "127.0.0.1:8080"), ARIPair("REQUEST_ID", "1")]),
        .notifyUser(user: nil, password: nil, headers: []),
        .notifyUserAuth(user: "u", password: "p", clientPrincipal: nil, headers: [ARIPair("user-agent", "x y")]),
        .notifyNewSession(user: "user1", sessionId: "S1", context: [ARIPair("REMOTE_IP", "127.0.0.1"), ARIPair("FORWARDING_INFO", nil)]),
        .notifySessionClose(sessionId: "S1"),
        .getItems(user: nil, group: "feed1 nosnap2", sessionId: "S1"),
        .getSchema(user: "user1", group: "g", schema: "bid ask", sessionId: "S1"),
        .getItemData(items: ["feed1", "nosnap2"]), .getItemData(items: []),
        .getUserItemData(user: "user1", items: ["feed1"]), .getUserItemData(user: nil, items: []),
        .notifyUserMessage(user: "user1", sessionId: "S1", message: "CHAT|hello wörld"),
        .notifyNewTables(user: "user1", sessionId: "S1", tables: [table, table]),
        .notifyTablesClose(sessionId: "S1", tables: [table]),
        .mpnDeviceAccess(user: "user1", sessionId: "S1", device: device),
        .mpnSubscriptionActivation(
            user: "user1", sessionId: "S1", table: table, device: device, trigger: nil,
            notificationFormat: "{\"aps\":{\"alert\":\"${bid}\"}}"),
        .mpnDeviceTokenChange(
            user: nil, sessionId: "S1", device: ARIMPNDevice(platform: nil, applicationId: nil, deviceToken: nil),
            newDeviceToken: "ff"),
    ]

    /// What a table keeps in a dialect (1.8 has no data adapter, item list or statistics).
    static func expected(_ r: ARIRequest, _ dialect: ARIDialect) -> ARIRequest {
        guard dialect == .v1_8 else { return r }
        func strip(_ t: ARITableInfo) -> ARITableInfo {
            var t = t
            t.dataAdapter = "DEFAULT"
            t.items = []
            t.statistics = []
            return t
        }
        switch r {
        case .notifyNewTables(let u, let s, let t): return .notifyNewTables(user: u, sessionId: s, tables: t.map(strip))
        case .notifyTablesClose(let s, let t): return .notifyTablesClose(sessionId: s, tables: t.map(strip))
        case .mpnSubscriptionActivation(let u, let s, let t, let d, let tr, let f):
            var t = strip(t)
            t.selector = nil
            return .mpnSubscriptionActivation(user: u, sessionId: s, table: t, device: d, trigger: tr, notificationFormat: f)
        default: return r
        }
    }

    @Test(arguments: [ARIDialect.v1_8, .v1_9])
    func everyRequestRoundTrips(dialect: ARIDialect) throws {
        for (i, request) in Self.every.enumerated() {
            let line = request.encode(id: String(100 + i), dialect: dialect)
            #expect(!line.contains("\r") && !line.contains("\n") && !line.contains("||"))
            let decoded = try ARIProxyLine.decode(line, dialect: dialect)
            #expect(decoded == .request(id: String(100 + i), Self.expected(request, dialect)), "\(line)")
        }
    }

    @Test func initLinesMatchTheWire() {
        let mpi = ARIRequest.metadataInit(
            ARIInitParameters(
                keepaliveHintMillis: 3000, adapterSet: "DEMO", dataAdapter: nil,
                serverInstanceId: nil, custom: [ARIPair("remote:color", "blue")]))
        #expect(
            mpi.encode(id: "10", dialect: .v1_8)
                == "10|MPI|S|ARI.version|S|1.9.1|S|keepalive_hint.millis|S|3000|S|adapters_conf.id|S|DEMO|S|remote%3Acolor|S|blue")
        let dpi = ARIRequest.dataInit(
            ARIInitParameters(
                keepaliveHintMillis: 3000, adapterSet: "DEMO", dataAdapter: "QUOTES",
                serverInstanceId: nil))
        #expect(
            dpi.encode(id: "30", dialect: .v1_8)
                == "30|DPI|S|ARI.version|S|1.9.1|S|keepalive_hint.millis|S|3000|S|adapters_conf.id|S|DEMO|S|data_provider.name|S|QUOTES")
    }

    @Test func tableLayoutsPerDialect() {
        let nnt = ARIRequest.notifyNewTables(user: "user1", sessionId: "S1", tables: [Self.table])
        #expect(
            nnt.encode(id: "17", dialect: .v1_8)
                == "17|NNT|S|user1|S|S1|I|1|M|M|S|feed1%20nosnap2|S|bid%20ask%20time|I|1|I|2|S|#")
        #expect(
            nnt.encode(id: "17", dialect: .v1_9)
                == "17|NNT|S|user1|S|S1|I|1|M|M|S|feed1%20nosnap2|S|QUOTES|S|bid%20ask%20time|I|1|I|2|S|#|I|2|S|feed1|S|nosnap2")
        var closed = Self.table
        closed.statistics = [ARIItemStatistics(realTimeUpdates: 5, lostUpdates: 0, filteredUpdates: 1)]
        #expect(
            ARIRequest.notifyTablesClose(sessionId: "S1", tables: [closed]).encode(id: "20", dialect: .v1_9)
                .hasSuffix("|S|#|I|2|S|feed1|S|nosnap2|I|1|L|5|L|0|L|1"))
        let msa = ARIRequest.mpnSubscriptionActivation(
            user: "u", sessionId: "S1", table: Self.table, device: Self.device,
            trigger: nil, notificationFormat: "{}")
        #expect(
            msa.encode(id: "5", dialect: .v1_8)
                == "5|MSA|S|u|S|S1|I|1|M|M|S|feed1%20nosnap2|S|bid%20ask%20time|I|1|I|2|P|A|S|com.example.app|S|0a1b|S|#|S|%7B%7D")
    }

    @Test func closeHasIdZeroAndAnOptionalReason() throws {
        #expect(ARIRequest.encodeClose(reason: "server shutting down") == "0|CLOSE|S|reason|S|server%20shutting%20down")
        #expect(ARIRequest.encodeClose(reason: nil) == "0|CLOSE")
        #expect(
            try ARIProxyLine.decode("0|CLOSE|S|reason|S|server+shutting+down", dialect: .v1_8)
                == .close(reason: "server shutting down"))
        #expect(try ARIProxyLine.decode("0|CLOSE", dialect: .v1_9) == .close(reason: nil))
    }

    @Test func malformedRequestsAreTypedErrors() {
        let cases: [(String, ARIProtocolError)] = [
            ("5|SUB", .missingArgument(expected: "S")),
            ("5|SUB|S|a|S|b", .trailingArguments(count: 2)),
            ("5|SUB|I|3", .unexpectedType(expected: "S", found: "I")),
            ("5|SUB|S|#", .badValue(type: "S", value: "# for item")),
            ("5|XYZ|S|a", .unknownMethod("XYZ")),
            ("5|UD3|S|a", .unexpectedMethod("UD3")),
            ("5", .missingMethod),
            ("5|NNT|S|u|S|S1|I|1|M|MD|S|g|S|s|I|1|I|2|S|#", .badValue(type: "M", value: "not a single mode")),
            ("5|NNT|S|u|S|S1", .missingArgument(expected: "I")),
            ("5|NNT|S|u|S|S1|I|1|M|M|S|g|S|d|S|s|I|1|I|1|S|#|I|99|S|a", .outOfRange(what: "item count", value: 99)),
            ("5|NNT|S|u|S|S1|I|1|M|M|S|g|S|d|S|s|I|1|I|1|S|#|I|-1", .outOfRange(what: "item count", value: -1)),
        ]
        for (line, error) in cases {
            let dialect: ARIDialect = line.contains("|S|d|") ? .v1_9 : .v1_8
            #expect(throws: error, "\(line)") { try ARIProxyLine.decode(line, dialect: dialect) }
        }
    }
}
