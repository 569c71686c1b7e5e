import Foundation
import Testing

@testable import LightstreamerServer

@Suite struct ConfigTests {
    static let complete = #"""
        {
          "servername": "Test Server",
          "host": "0.0.0.0",
          "port": 8443,
          "urlPrefix": "/push",
          "tls": { "certificateChainPath": "cert.pem", "privateKeyPath": "key.pem" },
          "timeouts": {
            "sessionTimeoutMillis": 20000,
            "recoveryWindowMillis": 15000,
            "keepaliveMillis": { "min": 500, "max": 20000, "default": 4000 },
            "contentLengthDefault": 1000000,
            "maxUpdateDelayMillis": 8
          },
          "demo": true,
          "adapterSets": [
            {
              "name": "LOAD",
              "metadata": {
                "users": { "alice": "secret" },
                "refusalCode": -7,
                "allowedModes": ["MERGE", "DISTINCT", "COMMAND"],
                "maxFrequency": 20,
                "messages": "echo",
                "items": [ { "pattern": "tick*", "allowedModes": ["MERGE"], "maxFrequency": 5 } ]
              },
              "dataAdapters": [
                {
                  "name": "DEFAULT",
                  "seed": 3,
                  "items": [
                    { "name": "still", "behavior": "static", "fields": { "a": "1", "b": null, "n": 2.5, "i": 3, "t": true } },
                    { "name": "tick", "count": 3, "behavior": "counter", "updatesPerSecond": 10,
                      "counterFields": ["count"], "constantFields": { "kind": "load" }, "start": 100 },
                    { "name": "px", "behavior": "randomWalk", "updatesPerSecond": 2,
                      "walkFields": { "last": { "start": 100, "step": 0.5, "min": 90, "max": 110, "decimals": 2 } } },
                    { "name": "book", "behavior": "commandTable",
                      "rows": [ { "key": "a", "qty": "10" }, { "key": "b", "qty": "20" } ],
                      "updatesPerSecond": 1, "updateFields": ["qty"], "churn": true }
                  ]
                }
              ],
              "mpn": { "apps": [ { "id": "com.example.app", "platform": "Apple" } ] }
            }
          ],
          "mpn": { "enabled": true, "database": { "path": "mpn.sqlite" } }
        }
        """#

    static func decode(_ text: String) throws(ConfigurationError) -> ServerConfiguration {
        try ServerConfiguration.decode(Data(text.utf8))
    }

    static func error(_ text: String) -> ConfigurationError? {
        do {
            _ = try decode(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func decodesACompleteFile() throws {
        let c = try Self.decode(Self.complete)
        #expect(c.servername == "Test Server")
        #expect(c.host == "0.0.0.0" && c.port == 8443 && c.urlPrefix == "/push")
        #expect(c.tls == .init(certificateChainPath: "cert.pem", privateKeyPath: "key.pem"))
        #expect(c.timeouts.sessionTimeoutMillis == 20000)
        #expect(c.timeouts.recoveryWindowMillis == 15000)
        #expect(c.timeouts.keepaliveMillis == .init(min: 500, max: 20000, default: 4000))
        #expect(c.timeouts.contentLengthDefault == 1_000_000)
        #expect(c.timeouts.maxUpdateDelayMillis == 8)
        #expect(ServerOptions(configuration: c).sessions.maxUpdateDelayMillis == 8)
        #expect(c.demo)
        #expect(c.mpn?["enabled"] == .bool(true))
        #expect(c.mpn?["database"]?["path"] == .string("mpn.sqlite"))
        let set = try #require(c.adapterSets.first)
        #expect(set.name == "LOAD")
        #expect(set.mpn?["apps"] != nil)
        let rules = set.metadata.rules
        #expect(rules.users == ["alice": "secret"])
        #expect(rules.refusalCode == -7)
        #expect(rules.allowedModes == [.merge, .distinct, .command])
        #expect(rules.maxFrequency == 20)
        #expect(rules.messages == .echo)
        #expect(rules.items.first?.pattern.text == "tick*")
        let adapter = try #require(set.dataAdapters.first)
        #expect(adapter.seed == 3)
        #expect(Set(adapter.items.keys) == ["still", "tick1", "tick2", "tick3", "px", "book"])
        #expect(adapter.items["still"] == .staticValues(["a": "1", "b": nil, "n": "2.5", "i": "3", "t": "true"]))
        guard case .counter(let counter) = adapter.items["tick2"] else {
            Issue.record("tick2 is not a counter")
            return
        }
        #expect(counter.updatesPerSecond == 10 && counter.start == 100 && counter.counterFields == ["count"])
        guard case .commandTable(let table) = adapter.items["book"] else {
            Issue.record("book is not a command table")
            return
        }
        #expect(table.rows.count == 2 && table.churn && table.updateFields == ["qty"])

        let sets = c.makeAdapterSets(clock: ManualEngineClock())
        #expect(sets.map(\.name).sorted() == ["DEMO", "LOAD"])
    }

    @Test func theShippedExampleDecodes() throws {
        // docs/config-example.json, found from this file's location.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("docs/config-example.json").path
        let c = try ServerConfiguration.load(path: path)
        #expect(!c.adapterSets.isEmpty)
    }

    @Test func minimalFileHasDefaults() throws {
        let c = try Self.decode(#"{"demo": true}"#)
        #expect(c.host == nil && c.port == nil && c.tls == nil && c.mpn == nil)
        #expect(c.servername == ServerConfiguration.defaultServerName)
        #expect(c.timeouts == ServerConfiguration.Timeouts())
    }

    @Test func errorsSayWhereAndWhat() {
        let unknownTop = Self.error(#"{"demo": true, "prot": 1}"#)
        #expect(unknownTop?.path == "prot")
        #expect(unknownTop?.message.contains("unknown key") == true)

        let badType = Self.error(#"{"demo": true, "port": "eighty"}"#)
        #expect(badType?.path == "port")
        #expect(badType?.message == "expected an integer")

        let badPort = Self.error(#"{"demo": true, "port": 70000}"#)
        #expect(badPort?.path == "port")

        let item = #"{"adapterSets": [{"name": "S", "dataAdapters": [{"items": [ITEM]}]}]}"#
        let badBehavior = Self.error(item.replacingOccurrences(of: "ITEM", with: #"{"name": "x", "behavior": "wobble"}"#))
        #expect(badBehavior?.path == "adapterSets[0].dataAdapters[0].items[0].behavior")
        #expect(badBehavior?.message.contains("static, counter, randomWalk, commandTable") == true)

        let missingRate = Self.error(
            item.replacingOccurrences(
                of: "ITEM", with: #"{"name": "x", "behavior": "counter", "counterFields": ["c"]}"#))
        #expect(missingRate?.path == "adapterSets[0].dataAdapters[0].items[0].updatesPerSecond")
        #expect(missingRate?.message == "required key is missing")

        let wrongKeyForBehavior = Self.error(
            item.replacingOccurrences(
                of: "ITEM", with: #"{"name": "x", "behavior": "static", "updatesPerSecond": 1}"#))
        #expect(wrongKeyForBehavior?.path == "adapterSets[0].dataAdapters[0].items[0].updatesPerSecond")

        let rowWithoutKey = Self.error(
            item.replacingOccurrences(
                of: "ITEM", with: #"{"name": "x", "behavior": "commandTable", "rows": [{"qty": "1"}]}"#))
        #expect(rowWithoutKey?.path == "adapterSets[0].dataAdapters[0].items[0].rows[0]")

        let badMode = Self.error(
            #"{"adapterSets": [{"name": "S", "metadata": {"allowedModes": ["MERGED"]}, "dataAdapters": [{"items": []}]}]}"#)
        #expect(badMode?.path == "adapterSets[0].metadata.allowedModes")
        #expect(badMode?.message.contains("MERGED") == true)

        let duplicate = Self.error(
            #"{"adapterSets": [{"name": "S", "dataAdapters": [{"items": []}]}, {"name": "S", "dataAdapters": [{"items": []}]}]}"#)
        #expect(duplicate?.path == "adapterSets[1].name")

        let keepalive = Self.error(#"{"demo": true, "timeouts": {"keepaliveMillis": {"min": 5000, "max": 1000}}}"#)
        #expect(keepalive?.path == "timeouts.keepaliveMillis")

        let longDelay = Self.error(#"{"demo": true, "timeouts": {"maxUpdateDelayMillis": 1001}}"#)
        #expect(longDelay?.path == "timeouts.maxUpdateDelayMillis")
        #expect(longDelay?.message.contains("at most 1000") == true)
        let negativeDelay = Self.error(#"{"demo": true, "timeouts": {"maxUpdateDelayMillis": -1}}"#)
        #expect(negativeDelay?.path == "timeouts.maxUpdateDelayMillis")

        let syntax = Self.error(#"{"demo": true,"#)
        #expect(syntax != nil)

        let nothing = Self.error("{}")
        #expect(nothing?.message.contains("no adapter set") == true)

        #expect(badType?.description == "port: expected an integer")
    }

    @Test func loadReportsTheFileName() {
        do {
            _ = try ServerConfiguration.load(path: "/nonexistent/config.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.file == "/nonexistent/config.json")
            #expect(error.description.hasPrefix("/nonexistent/config.json: cannot read"))
        }
    }
}
