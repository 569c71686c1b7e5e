import AsyncHTTPClient
import Foundation
import LightstreamerServer
import TLCP
import Testing

@testable import MPNModule

/// The whole server over real sockets: sessions hand MPN requests to the module, the demo
/// `counter` item crosses a trigger, the provider gets exactly one notification, the internal
/// items show it, and a restarted server on the same SQLite file still has everything.
@Suite("MPN through the server (real sockets)")
struct MPNServerEndToEndTests {
    static let internalAdapter = MPNInternalDataAdapter.defaultName

    static func temporaryDatabase() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("mpn-e2e-\(UUID().uuidString).sqlite").path
    }

    static func cleanUp(_ path: String, _ http: HTTPClient) {
        for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
        _ = http.shutdown()
    }

    func makeServer(path: String, provider: RecordingProvider) async throws -> LightstreamerMPNServer {
        let configuration = MPNConfiguration.demoDefault(sqlitePath: path)
        let registry = MPNProviderRegistry(configuration: configuration, providers: ["Apple/*": provider, "Google/*": provider])
        let demo = DemoAdapters.makeDemoAdapterSet(options: .init(stockUpdatesPerSecond: 2, counterUpdatesPerSecond: 10))
        let server = try await LightstreamerMPNServer.make(
            options: ServerOptions(host: "127.0.0.1", port: 0), adapterSets: [demo],
            mpn: configuration, providers: registry)
        try await server.start()
        return server
    }

    @Test("register, trigger on a demo item, one notification, TRIGGERED on SUB-, restart keeps it all")
    func registerTriggerRestart() async throws {
        let (path, http) = (Self.temporaryDatabase(), HTTPClient(eventLoopGroupProvider: .singleton))
        defer { Self.cleanUp(path, http) }
        let provider = RecordingProvider()
        let server = try await makeServer(path: path, provider: provider)
        let port = try #require(server.port)
        let c = try await PollingTLCPClient.connect(port: port, adapterSet: "DEMO", client: http)

        // The counter's current value.
        #expect(
            try await c.control([
                "LS_reqId": "1", "LS_op": "add", "LS_subId": "1", "LS_mode": "MERGE", "LS_group": "counter",
                "LS_schema": "count", "LS_snapshot": "true",
            ]) == "REQOK,1")
        let first = try await c.pollUntil { updateValues($0, subscription: 1) != nil }
        let counts = first.compactMap { updateValues($0, subscription: 1)?.first }.compactMap { Int($0) }
        let start = try #require(counts.first)

        // Operations on a device not registered in this session are refused.
        let early = try await c.control(["LS_reqId": "2", "LS_op": "reset_badge", "PN_deviceId": "nope"])
        #expect(early.hasPrefix("REQERR,2,45,"))

        #expect(
            try await c.control([
                "LS_reqId": "3", "LS_op": "register", "PN_type": "Apple", "PN_appId": "com.example.app",
                "PN_deviceToken": "0a1b2c",
            ]) == "REQOK,3")
        let reg = try await c.pollUntil { $0.hasPrefix("MPNREG,") }
        let regLine = try #require(reg.first { $0.hasPrefix("MPNREG,") }).split(separator: ",").map(String.init)
        #expect(regLine.count == 3 && regLine[2] == Self.internalAdapter)
        let device = regLine[1]

        // Bad trigger field: 47; then the real activation.
        let bad = try await c.control([
            "LS_reqId": "4", "LS_op": "activate", "LS_subId": "2", "LS_mode": "MERGE", "LS_group": "counter",
            "LS_schema": "count", "PN_deviceId": device, "PN_notificationFormat": #"{"aps":{"alert":"x"}}"#,
            "PN_trigger": "Integer.parseInt(${nope}) > 1",
        ])
        #expect(bad.hasPrefix("REQERR,4,47,"))
        let threshold = start + 5
        #expect(
            try await c.control([
                "LS_reqId": "5", "LS_op": "activate", "LS_subId": "3", "LS_mode": "MERGE", "LS_group": "counter",
                "LS_schema": "count", "PN_deviceId": device,
                "PN_notificationFormat": #"{"aps":{"alert":"count ${count}","badge":"AUTO"}}"#,
                "PN_trigger": "Integer.parseInt(${count}) > \(threshold)",
            ]) == "REQOK,5")
        let ok = try await c.pollUntil { $0.hasPrefix("MPNOK,3,") }
        let mpnId = String(try #require(ok.first { $0.hasPrefix("MPNOK,3,") }).dropFirst("MPNOK,3,".count))

        // The internal items list it and show it TRIGGERED once the counter crossed the threshold.
        #expect(
            try await c.control([
                "LS_reqId": "6", "LS_op": "add", "LS_subId": "4", "LS_mode": "COMMAND", "LS_group": "SUBS-" + device,
                "LS_schema": "key command", "LS_data_adapter": Self.internalAdapter, "LS_snapshot": "true",
                "LS_requested_max_frequency": "unfiltered",
            ]) == "REQOK,6")
        #expect(
            try await c.control([
                "LS_reqId": "7", "LS_op": "add", "LS_subId": "5", "LS_mode": "MERGE", "LS_group": "SUB-" + mpnId,
                "LS_schema": MPNInternalDataAdapter.subscriptionFields.joined(separator: " "),
                "LS_data_adapter": Self.internalAdapter, "LS_snapshot": "true",
                "LS_requested_max_frequency": "unfiltered",
            ]) == "REQOK,7")
        let internalLines = try await c.pollUntil { updateValues($0, subscription: 5)?.first == "TRIGGERED" }
        #expect(internalLines.contains { updateValues($0, subscription: 4) == ["SUB-" + mpnId, "ADD"] })
        // (ACTIVE first, unless the counter crossed the threshold before SUB- was subscribed.)
        let statuses = internalLines.compactMap { updateValues($0, subscription: 5)?.first }
        #expect(statuses.last == "TRIGGERED" && statuses.allSatisfy { $0 == "ACTIVE" || $0 == "TRIGGERED" })

        // Exactly one notification, with the value that crossed the threshold, even as the counter goes on.
        _ = try await c.poll(idleMillis: 1000)
        await server.module.settle()
        // (threshold + 1 unless the machine is so loaded that the counter passed it before the
        // activation: then the first value seen.)
        let alerts = provider.alerts()
        #expect(alerts.count == 1)
        let fired = try #require(alerts.first.flatMap { Int($0.dropFirst("count ".count)) })
        #expect(fired > threshold)
        let n = try #require(provider.notifications.first)
        #expect(n.triggered && n.deviceToken == "0a1b2c" && n.subscriptionId == mpnId)
        #expect(n.payload.serialized == #"{"aps":{"alert":"count \#(fired)","badge":1}}"#)

        // Restart on the same file: device and subscription are still there, still TRIGGERED, no new notification.
        await server.shutdown()
        let again = try await makeServer(path: path, provider: provider)
        let c2 = try await PollingTLCPClient.connect(port: try #require(again.port), adapterSet: "DEMO", client: http)
        #expect(
            try await c2.control([
                "LS_reqId": "1", "LS_op": "register", "PN_type": "Apple", "PN_appId": "com.example.app",
                "PN_deviceToken": "0a1b2c",
            ]) == "REQOK,1")
        let reg2 = try await c2.pollUntil { $0.hasPrefix("MPNREG,") }
        #expect(reg2.contains("MPNREG,\(device),\(Self.internalAdapter)"))
        #expect(
            try await c2.control([
                "LS_reqId": "2", "LS_op": "add", "LS_subId": "1", "LS_mode": "COMMAND", "LS_group": "SUBS-" + device,
                "LS_schema": "key command", "LS_data_adapter": Self.internalAdapter, "LS_snapshot": "true",
                "LS_requested_max_frequency": "unfiltered",
            ]) == "REQOK,2")
        #expect(
            try await c2.control([
                "LS_reqId": "3", "LS_op": "add", "LS_subId": "2", "LS_mode": "MERGE", "LS_group": "SUB-" + mpnId,
                "LS_schema": "status trigger", "LS_data_adapter": Self.internalAdapter, "LS_snapshot": "true",
                "LS_requested_max_frequency": "unfiltered",
            ]) == "REQOK,3")
        let after = try await c2.pollUntil { updateValues($0, subscription: 2) != nil }
        #expect(after.contains { updateValues($0, subscription: 1) == ["SUB-" + mpnId, "ADD"] })
        let rows = after.compactMap { updateValues($0, subscription: 2) }
        #expect(rows.first == ["TRIGGERED", "Integer.parseInt($[1]) > \(threshold)"])

        // Deactivate all: one MPNDEL, and the SUBS- row goes away.
        #expect(try await c2.control(["LS_reqId": "4", "LS_op": "deactivate", "PN_deviceId": device]) == "REQOK,4")
        // (The key is sent as unchanged: the previous update of the item had the same key.)
        let del = try await c2.pollUntil { updateValues($0, subscription: 1)?.last == "DELETE" }
        #expect(del.filter { $0.hasPrefix("MPNDEL,") } == ["MPNDEL,\(mpnId)"])
        await again.module.settle()
        #expect(provider.notifications.count == 1)
        await again.shutdown()
    }

    @Test("a server without MPN for the adapter set answers 40")
    func disabledAdapterSet() async throws {
        let (path, http) = (Self.temporaryDatabase(), HTTPClient(eventLoopGroupProvider: .singleton))
        defer { Self.cleanUp(path, http) }
        var configuration = MPNConfiguration.demoDefault(sqlitePath: path)
        configuration.adapterSets = ["OTHER"]
        let server = try await LightstreamerMPNServer.make(
            options: ServerOptions(host: "127.0.0.1", port: 0),
            adapterSets: [DemoAdapters.makeDemoAdapterSet()], mpn: configuration)
        try await server.start()
        let c = try await PollingTLCPClient.connect(port: try #require(server.port), adapterSet: "DEMO", client: http)
        let reply = try await c.control([
            "LS_reqId": "1", "LS_op": "register", "PN_type": "Google", "PN_appId": "app",
            "PN_deviceToken": "t",
        ])
        #expect(reply.hasPrefix("REQERR,1,40,"))
        await server.shutdown()
    }
}
