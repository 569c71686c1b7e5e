import NIOSSL
import Testing

@testable import LightstreamerServer

/// The `front` section of the configuration file and the options it gives.
@Suite struct FrontConfigTests {
    @Test func frontSectionSetsTheOptions() throws {
        let c = try ConfigTests.decode(
            #"""
            { "demo": true, "front": {
                "tlsHandshakeTimeoutMillis": 1, "requestHeadTimeoutMillis": 2, "requestBodyTimeoutMillis": 3,
                "idleConnectionTimeoutMillis": 4, "webSocketSessionTimeoutMillis": 5, "maxConnections": 6,
                "maxConnectionsPerAddress": 7, "maxRequestHeadBytes": 8, "allowedOrigins": ["https://a.example"],
                "adminListener": { "host": "127.0.0.1", "port": 9090 }, "tlsMinimumVersion": "1.3" } }
            """#)
        let o = ServerOptions(configuration: c).front
        #expect(
            o.phaseLimits
                == ConnectionPhases.Limits(
                    tlsHandshakeMillis: 1, requestHeadMillis: 2, requestBodyMillis: 3,
                    idleMillis: 4, webSocketSessionMillis: 5, maxRequestHeadBytes: 8))
        #expect(o.maxConnections == 6)
        #expect(o.maxConnectionsPerAddress == 7)
        #expect(o.allowedOrigins == ["https://a.example"])
        #expect(o.adminListener?.host == "127.0.0.1" && o.adminListener?.port == 9090)
        #expect(o.tlsMinimumVersion == .tlsv13)
    }

    @Test func defaultsWithoutAFrontSection() throws {
        let o = ServerOptions(configuration: try ConfigTests.decode(#"{ "demo": true }"#)).front
        #expect(
            o.phaseLimits
                == ConnectionPhases.Limits(
                    tlsHandshakeMillis: 10_000, requestHeadMillis: 10_000,
                    requestBodyMillis: 30_000, idleMillis: 60_000,
                    webSocketSessionMillis: 15_000, maxRequestHeadBytes: 65_536))
        #expect(o.maxConnections == 16_000)
        #expect(o.maxConnectionsPerAddress == 1_000)
        #expect(o.allowedOrigins == nil)
        #expect(o.adminListener == nil)
        #expect(o.tlsMinimumVersion == .tlsv12)
    }

    @Test func badValuesAreReported() {
        #expect(
            ConfigTests.error(#"{ "demo": true, "front": { "requestHeadTimeoutMillis": 0 } }"#)?.path == "front.requestHeadTimeoutMillis")
        #expect(ConfigTests.error(#"{ "demo": true, "front": { "tlsMinimumVersion": "1.1" } }"#)?.path == "front.tlsMinimumVersion")
        #expect(ConfigTests.error(#"{ "demo": true, "front": { "adminListener": { "host": "x", "port": 0 } } }"#) != nil)
        #expect(ConfigTests.error(#"{ "demo": true, "front": { "maxConections": 5 } }"#) != nil)
    }
}
