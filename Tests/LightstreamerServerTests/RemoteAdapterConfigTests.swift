import ARI
import Foundation
import NIOPosix
import Testing

@testable import LightstreamerServer

/// Remote adapters in the configuration file: decoding, the shipped example, and a server
/// that waits for its remotes, refuses wrong credentials and reports them on /metrics.
@Suite struct RemoteAdapterConfigTests {
    static let examplePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/remote-adapters-example.json").path

    @Test func theShippedExampleDecodes() throws {
        let c = try ServerConfiguration.load(path: Self.examplePath)
        let set = try #require(c.adapterSets.first { $0.name == "REMOTE" })
        #expect(set.metadata.remote?.port == 6662)
        #expect(set.metadata.remote?.credentials == RemoteCredentials(user: "remote1", password: "change-me"))
        let data = try #require(set.dataAdapters.first { $0.name == "DEFAULT" })
        #expect(data.remote?.port == 6661)
        #expect(data.remote?.parameters == ["feed:rate": "10"])
        let built = set.makeAdapterSet()
        #expect(built.metadata is RemoteMetadataAdapter)
        #expect(built.dataAdapters["DEFAULT"] is RemoteDataAdapter)
        #expect(built.remoteEndpoints.map(\.role) == ["metadata", "data:DEFAULT"])
        #expect(built.remoteWaitMillis == 30000)
    }

    static func decode(_ json: String) throws -> AdapterSetConfiguration {
        try JSONDecoder().decode(AdapterSetConfiguration.self, from: Data(json.utf8))
    }

    @Test func badRemoteKeysAreRefused() {
        #expect(throws: (any Error).self) { // rules mixed with a remote
            try Self.decode(#"{"name":"R","metadata":{"remote":{"port":1},"users":{}},"dataAdapters":[{"remote":{"port":2}}]}"#)
        }
        #expect(throws: (any Error).self) { // a user without a password
            try Self.decode(#"{"name":"R","dataAdapters":[{"remote":{"port":2,"user":"u"}}]}"#)
        }
        #expect(throws: (any Error).self) { // `tls` is an object with the PEM files
            try Self.decode(#"{"name":"R","dataAdapters":[{"remote":{"port":2,"tls":true}}]}"#)
        }
        #expect(throws: (any Error).self) {
            try Self.decode(#"{"name":"R","dataAdapters":[{"remote":{"port":70000}}]}"#)
        }
    }

    /// A server with a remote Data Adapter on a free port: its start waits (bounded) for the
    /// remote; a remote with the wrong password is closed and counted; the right one connects.
    @Test func startWaitsForRemotesAndRefusesWrongCredentials() async throws {
        let config = try Self.decode(
            #"""
            {"name":"REMOTE","remoteWaitMillis":300,
             "dataAdapters":[{"name":"DEFAULT","remote":{"port":0,"user":"rmt","password":"s3cret"}}]}
            """#)
        let set = config.makeAdapterSet()
        let server = LightstreamerServer(options: ServerOptions(host: "127.0.0.1", port: 0), adapterSets: [set])
        let started = ContinuousClock.now
        try await server.start()
        let waited = ContinuousClock.now - started
        // At least the wait for the remote; bounded (a loaded CI machine took over 5 s to start).
        #expect(waited >= .milliseconds(250) && waited < .seconds(30))
        let endpoint = try #require(set.remoteEndpoints.first)
        let port = try #require(endpoint.boundPort)
        let text = server.metrics.prometheusText(nowMillis: 1)
        #expect(text.contains(#"lightstreamer_remote_adapter_connected{adapter_set="REMOTE",adapter="data:DEFAULT"} 0"#))

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            typealias R = RemoteDataAdapterTests
            let (bad, badLines) = try await R.ScriptedRemote.connect(port: port, group: group)
            try await R.send("1|RAC|S|user|S|rmt|S|password|S|wrong|S|enableClosePacket|S|true", on: bad)
            var lines = badLines.makeAsyncIterator()
            let close = await lines.next()
            #expect(close?.hasPrefix("0|CLOSE") == true)
            #expect(await lines.next() == nil) // and the socket is closed
            await waitUntil { endpoint.counters.disconnections != 0 }
            let (good, goodLines) = try await R.ScriptedRemote.connect(port: port, group: group)
            try await R.send("1|RAC|S|user|S|rmt|S|password|S|s3cret|S|enableClosePacket|S|true", on: good)
            var lines2 = goodLines.makeAsyncIterator()
            #expect(await lines2.next()?.hasPrefix("10|DPI|") == true)
            try await R.send("10|DPI|S|ARI.version|S|1.8.3", on: good)
            #expect(await endpoint.connection.waitUntilReady(timeout: .seconds(30), on: group.next()))
            let after = server.metrics.prometheusText(nowMillis: 2)
            #expect(after.contains(#"lightstreamer_remote_adapter_connected{adapter_set="REMOTE",adapter="data:DEFAULT"} 1"#))
            #expect(after.contains(#"lightstreamer_remote_adapter_disconnections_total{adapter_set="REMOTE",adapter="data:DEFAULT"} 1"#))
            await server.shutdown()
            #expect(await lines2.next()?.hasPrefix("0|CLOSE") == true)
        } catch {
            await server.shutdown()
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }
}
