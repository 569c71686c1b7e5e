import AsyncHTTPClient
import Foundation
import LightstreamerServer
import NIOConcurrencyHelpers
import TLCP
import Testing

@testable import MPNModule

/// The application's Metadata Adapter, refusing the internal MPN items when told to and
/// recording what it was asked.
final class GatekeeperMetadata: MetadataAdapter {
    let inner: any MetadataAdapter
    let refuseInternal = NIOLockedValueBox(false)
    let tables = NIOLockedValueBox<[String]>([])

    init(inner: any MetadataAdapter) { self.inner = inner }

    func items(user: String?, sessionId: String, group: String, dataAdapter: String) async throws -> [String] {
        try await inner.items(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter)
    }

    func fields(user: String?, sessionId: String, group: String, dataAdapter: String, schema: String) async throws -> [String] {
        try await inner.fields(user: user, sessionId: sessionId, group: group, dataAdapter: dataAdapter, schema: schema)
    }

    func notifyNewTable(user: String?, sessionId: String, table: TableInfo) async throws {
        tables.withLockedValue { $0.append(table.group) }
        if table.dataAdapter == MPNInternalDataAdapter.defaultName, refuseInternal.withLockedValue({ $0 }) {
            throw MetadataError.subscription(code: -7, message: "not for you")
        }
        try await inner.notifyNewTable(user: user, sessionId: sessionId, table: table)
    }
}

/// The internal MPN items are served only to sessions that registered their device, and the
/// application's Metadata Adapter is asked about them.
@Suite("Internal MPN items: authorization")
struct InternalItemAuthorizationTests {
    static let adapter = MPNInternalDataAdapter.defaultName

    func subscribe(
        _ c: PollingTLCPClient, _ req: Int, _ item: String, mode: String = "MERGE",
        schema: String = "status status_timestamp"
    ) async throws -> String {
        try await c.control([
            "LS_reqId": "\(req)", "LS_op": "add", "LS_subId": "\(req)", "LS_mode": mode, "LS_group": item,
            "LS_schema": schema, "LS_data_adapter": Self.adapter, "LS_snapshot": "true",
            "LS_requested_max_frequency": "unfiltered",
        ])
    }

    @Test(
        "another session cannot read a device's DEV-, SUBS-, SUB- items until it registers the device; the Metadata Adapter can refuse them"
    )
    func secondSessionRefused() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mpn-auth-\(UUID().uuidString).sqlite").path
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer {
            for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
            _ = http.shutdown()
        }
        var demo = DemoAdapters.makeDemoAdapterSet()
        let gate = GatekeeperMetadata(inner: demo.metadata)
        demo.metadata = gate
        let configuration = MPNConfiguration.demoDefault(sqlitePath: path)
        let provider = RecordingProvider()
        let registry = MPNProviderRegistry(configuration: configuration, providers: ["Apple/*": provider])
        let server = try await LightstreamerMPNServer.make(
            options: ServerOptions(host: "127.0.0.1", port: 0), adapterSets: [demo],
            mpn: configuration, providers: registry)
        try await server.start()
        let port = try #require(server.port)

        let owner = try await PollingTLCPClient.connect(port: port, adapterSet: "DEMO", client: http)
        #expect(
            try await owner.control([
                "LS_reqId": "1", "LS_op": "register", "PN_type": "Apple", "PN_appId": "com.example.app",
                "PN_deviceToken": "0a1b2c",
            ]) == "REQOK,1")
        let reg = try await owner.pollUntil { $0.hasPrefix("MPNREG,") }
        let device = String(try #require(reg.first { $0.hasPrefix("MPNREG,") }).split(separator: ",")[1])
        #expect(
            try await owner.control([
                "LS_reqId": "2", "LS_op": "activate", "LS_subId": "2", "LS_mode": "MERGE",
                "LS_group": "counter", "LS_schema": "count", "PN_deviceId": device,
                "PN_notificationFormat": #"{"aps":{"alert":"x"}}"#,
            ]) == "REQOK,2")
        let ok = try await owner.pollUntil { $0.hasPrefix("MPNOK,2,") }
        let mpnId = String(try #require(ok.first { $0.hasPrefix("MPNOK,2,") }).dropFirst("MPNOK,2,".count))

        // The owner reads its items; the Metadata Adapter was asked about them.
        #expect(try await subscribe(owner, 3, "DEV-" + device) == "REQOK,3")
        #expect(try await subscribe(owner, 4, "SUB-" + mpnId) == "REQOK,4")
        #expect(gate.tables.withLockedValue { $0 }.contains("DEV-" + device))

        // A session that knows the ids but did not register the device: refused (21), as an unknown item.
        let other = try await PollingTLCPClient.connect(port: port, adapterSet: "DEMO", client: http)
        #expect(try await subscribe(other, 1, "DEV-" + device).hasPrefix("REQERR,1,21,"))
        #expect(try await subscribe(other, 2, "SUBS-" + device, mode: "COMMAND", schema: "key command").hasPrefix("REQERR,2,21,"))
        #expect(try await subscribe(other, 3, "SUB-" + mpnId).hasPrefix("REQERR,3,21,"))
        #expect(try await subscribe(other, 4, "DEV-nope").hasPrefix("REQERR,4,21,"))

        // Once it registers the device it may; unless the Metadata Adapter says no (its code reaches the client).
        #expect(
            try await other.control([
                "LS_reqId": "5", "LS_op": "register", "PN_type": "Apple", "PN_appId": "com.example.app",
                "PN_deviceToken": "0a1b2c",
            ]) == "REQOK,5")
        _ = try await other.pollUntil { $0.hasPrefix("MPNREG,") }
        #expect(try await subscribe(other, 6, "SUB-" + mpnId) == "REQOK,6")
        gate.refuseInternal.withLockedValue { $0 = true }
        #expect(try await subscribe(other, 7, "DEV-" + device).hasPrefix("REQERR,7,-7,"))
        await server.shutdown()
    }
}

@Suite struct MPNSessionDevicesTests {
    @Test func aClosedSessionLosesItsDevices() {
        let devices = MPNSessionDevices()
        devices.register(device: "D1", in: "S1")
        devices.register(device: "D1", in: "S2")
        #expect(devices.isRegistered(device: "D1", in: "S1"))
        devices.forget("S1")
        #expect(!devices.isRegistered(device: "D1", in: "S1"))
        #expect(devices.isRegistered(device: "D1", in: "S2"))
    }
}
