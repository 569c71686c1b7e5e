import Foundation
import Testing

@testable import LightstreamerServer

/// The control link, the node name and the drain period: their rules and the configuration keys.
@Suite struct ClusterConfigTests {
    @Test(arguments: [
        ("*", "*"),
        ("push.example.com", "push.example.com"),
        ("push.example.com:8443", "push.example.com:8443"),
        ("127.0.0.1:8080/node-a", "127.0.0.1:8080/node-a"),
        ("host.com/TestPrefix", "host.com/TestPrefix"),
        ("host.com/a/b_c.d~e/", "host.com/a/b_c.d~e"),
        ("[::1]:8080", "[::1]:8080"),
        ("[2001:db8::7]/ls", "[2001:db8::7]/ls"),
        ("localhost", "localhost"),
    ])
    func acceptedLinks(input: String, sent: String) throws {
        #expect(try ControlLink.validated(input) == sent)
    }

    @Test(arguments: [
        "", "http://host.com", "host.com:0", "host.com:65536", "host.com:80a", "host.com:", ":8080", "/prefix",
        "host..com", "-host.com", "host.com/a//b", "host.com/a b", "host.com/a?b", "host.com/a#b", "host,com",
        "host.com/%41", "user@host.com", "::1", "[::1", "[zz::1]:80", "[::1]x", "host.com/lightstreamer",
        "host.com/ls/lightstreamer", "host.com/..", "hôst.com", "host.com\r\n", "a:1:2",
        String(repeating: "a", count: 600),
    ])
    func refusedLinks(input: String) {
        #expect(throws: ControlLink.Invalid.self) { try ControlLink.validated(input) }
    }

    @Test func refusalsSayWhy() {
        #expect(throws: ControlLink.Invalid.self) { try ControlLink.validated("https://a.com") }
        do {
            _ = try ControlLink.validated("https://a.com")
        } catch {
            #expect(error.description.contains("without a scheme"), "\(error)")
        }
        do {
            _ = try ControlLink.validated("a.com/lightstreamer")
        } catch {
            #expect(error.description.contains("clients add it themselves"), "\(error)")
        }
    }

    @Test func nodeNames() throws {
        #expect(try NodeName.validated("node-a.eu_1") == "node-a.eu_1")
        for bad in ["", "a b", "a,b", "a\"b", "é", String(repeating: "n", count: 65)] {
            #expect(throws: NodeName.Invalid.self) { try NodeName.validated(bad) }
        }
        #expect(NodeName.derived(fromHostName: "web 1.example.com") == "web-1.example.com")
        #expect(NodeName.derived(fromHostName: "") == "node")
        #expect(NodeName.derived(fromHostName: String(repeating: "h", count: 100)).count == NodeName.maxLength)
        #expect((try? NodeName.validated(NodeName.hostDefault)) != nil)
    }

    @Test func servnameCarriesTheNode() {
        var s = SessionSettings()
        #expect(s.announcedServerName == "Lightstreamer Swift Server")
        s.nodeName = "node-b"
        #expect(s.announcedServerName == "Lightstreamer Swift Server (node-b)")
    }

    @Test func configurationKeys() throws {
        let json = #"{"demo": true, "nodeName": "node-a", "controlLink": "lb.example.com/node-a/", "timeouts": {"drainMillis": 15000}}"#
        let c = try ServerConfiguration.decode(Data(json.utf8))
        #expect(c.nodeName == "node-a")
        #expect(c.controlLink == "lb.example.com/node-a")
        #expect(c.timeouts.drainMillis == 15_000)
        let options = ServerOptions(configuration: c)
        #expect(options.sessions.nodeName == "node-a")
        #expect(options.sessions.controlLink == "lb.example.com/node-a")
        #expect(options.drainMillis == 15_000)

        let defaults = ServerOptions(configuration: try ServerConfiguration.decode(Data(#"{"demo": true}"#.utf8)))
        #expect(defaults.sessions.nodeName == nil)
        #expect(defaults.sessions.controlLink == "*")
        #expect(defaults.drainMillis == ServerOptions.defaultDrainMillis)
    }

    @Test(arguments: [
        (#"{"demo": true, "controlLink": "http://a.com"}"#, "controlLink"),
        (#"{"demo": true, "controlLink": 5}"#, "controlLink"),
        (#"{"demo": true, "nodeName": "a b"}"#, "nodeName"),
        (#"{"demo": true, "timeouts": {"drainMillis": -1}}"#, "timeouts.drainMillis"),
        (#"{"demo": true, "timeouts": {"drainMillis": 3600001}}"#, "timeouts.drainMillis"),
    ])
    func badConfigurationValues(json: String, path: String) {
        do {
            _ = try ServerConfiguration.decode(Data(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.path == path, "\(error)")
        }
    }
}
