import Foundation
import Testing

@testable import LightstreamerServer

@Suite struct LimitsConfigurationTests {
    static func options(_ limits: String) throws -> ServerOptions {
        let c = try ServerConfiguration.decode(Data(#"{"demo": true, "limits": \#(limits)}"#.utf8))
        return ServerOptions(configuration: c)
    }

    @Test func everyLimitReachesTheSessionSettings() throws {
        let o = try Self.options(
            #"""
            {"maxSessions": 10, "maxSessionsPerAddress": 0, "maxSubscriptionsPerSession": 3, "maxItemsPerSubscription": 4,
             "maxQueuedMessages": 5, "maxMessageSequences": 6, "maxQueuedMPNOperations": 7, "maxBacklogBytes": 8000,
             "requestLimitBytes": 9000, "maxInactivityMillis": 11000, "maxMessageWaitMillis": 12000,
             "maxTotalBacklogBytes": 13000, "maxUndrainedMillis": 14000}
            """#)
        let s = o.sessions
        #expect(s.maxSessions == 10)
        #expect(s.maxSessionsPerAddress == nil)
        #expect(s.maxSubscriptionsPerSession == 3)
        #expect(s.maxItemsPerSubscription == 4)
        #expect(s.maxQueuedMessages == 5)
        #expect(s.maxMessageSequences == 6)
        #expect(s.maxQueuedMPNOperations == 7)
        #expect(s.maxBacklogBytes == 8000)
        #expect(s.requestLimit == 9000)
        #expect(s.maxInactivityMillis == 11000)
        #expect(s.maxMessageWaitMillis == 12000)
        #expect(s.maxTotalBacklogBytes == 13000)
        #expect(s.maxUndrainedMillis == 14000)
        #expect(try Self.options(#"{"maxUndrainedMillis": 0}"#).sessions.maxUndrainedMillis == 0)
    }

    @Test func missingKeysKeepThePublicServerDefaults() throws {
        let s = try Self.options("{}").sessions
        let d = SessionSettings()
        #expect(s.maxSessionsPerAddress == d.maxSessionsPerAddress)
        #expect(s.maxSessionsPerAddress == 1_000)
        #expect(s.maxBacklogBytes == 2 << 20)
        #expect(s.requestLimit == 50_000)
    }

    @Test(arguments: [
        #"{"maxSubscriptionsPerSession": 0}"#, #"{"maxBacklogBytes": -1}"#, #"{"maxTotalBacklogBytes": 0}"#, #"{"requestLimitBytes": 10}"#,
        #"{"maxSessions": -5}"#, #"{"unknown": 1}"#, #"{"maxUndrainedMillis": -1}"#,
    ])
    func badValuesAreRefused(_ limits: String) {
        #expect(throws: ConfigurationError.self) { try Self.options(limits) }
    }
}
