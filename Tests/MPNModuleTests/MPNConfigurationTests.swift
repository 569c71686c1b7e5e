import Foundation
import LightstreamerServer
import TLCP
import Testing

@testable import MPNModule

/// The `mpn` section of the server's configuration file, as the executable reads it.
@Suite("MPN configuration from the server's file")
struct MPNConfigurationTests {
    static func configuration(_ json: String) throws -> ServerConfiguration {
        try ServerConfiguration.decode(Data(json.utf8))
    }

    static let sets = #""adapterSets": [{"name": "A", "dataAdapters": [{"items": []}]}, {"name": "B", "dataAdapters": [{"items": []}]}]"#

    @Test("docs/config-example.json: MPN on, the listed Apple app only, any Google app, SQLite")
    func example() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let server = try ServerConfiguration.load(path: root.appendingPathComponent("docs/config-example.json").path)
        let mpn = try MPNConfiguration(serverConfiguration: server)
        #expect(mpn.enabled)
        #expect(mpn.isEnabled(for: "LOADTEST"))
        #expect(mpn.store.sqlitePath == "mpn.sqlite" && mpn.store.postgresURL == nil)
        #expect(mpn.application(.apple, "com.example.demo")?.serviceLevel == .test)
        #expect(mpn.application(.apple, "com.example.other") == nil, "an app no entry matches gets 43")
        #expect(mpn.application(.google, "anything")?.logFile == "mpn-notifications.jsonl")
    }

    @Test("no mpn section: off")
    func absent() throws {
        let mpn = try MPNConfiguration(serverConfiguration: Self.configuration("{\(Self.sets)}"))
        #expect(!mpn.enabled && !mpn.isEnabled(for: "A"))
    }

    @Test("an adapter set's own mpn.enabled turns MPN on for it alone, or off for it")
    func perAdapterSet() throws {
        let on =
            #"{"adapterSets": [{"name": "A", "dataAdapters": [{"items": []}], "mpn": {"enabled": true}}, {"name": "B", "dataAdapters": [{"items": []}]}]}"#
        let a = try MPNConfiguration(serverConfiguration: Self.configuration(on))
        #expect(a.isEnabled(for: "A") && !a.isEnabled(for: "B"))
        let off =
            #"{"demo": true, "adapterSets": [{"name": "A", "dataAdapters": [{"items": []}], "mpn": {"enabled": false}}, {"name": "B", "dataAdapters": [{"items": []}]}], "mpn": {"enabled": true}}"#
        let b = try MPNConfiguration(serverConfiguration: Self.configuration(off))
        #expect(!b.isEnabled(for: "A") && b.isEnabled(for: "B") && b.isEnabled(for: "DEMO"))
    }

    @Test("cluster and timeout keys")
    func clusterKeys() throws {
        let json =
            #"{\#(Self.sets), "mpn": {"enabled": true, "store": {"postgresURL": "postgres://u@h/db"}, "moduleId": "node-1", "moduleCheckPeriodMillis": 2000, "moduleTimeoutMillis": 9000, "requestTimeoutMillis": 500}}"#
        let mpn = try MPNConfiguration(serverConfiguration: Self.configuration(json))
        #expect(mpn.store.postgresURL == "postgres://u@h/db" && mpn.store.sqlitePath == nil)
        #expect(mpn.moduleId == "node-1" && mpn.moduleCheckPeriodMillis == 2000 && mpn.moduleTimeoutMillis == 9000)
        #expect(mpn.requestTimeoutMillis == 500)
    }
}
