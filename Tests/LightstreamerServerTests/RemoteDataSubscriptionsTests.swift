import Testing

@testable import LightstreamerServer

@Suite struct RemoteDataSubscriptionsTests {
    @Test func notificationsAreAcceptedOnlyUnderTheLiveSubscriptionId() {
        var s = RemoteDataSubscriptions()
        s.want("feed1")
        #expect(!s.accepts(item: "feed1", id: "11"))
        s.sent("feed1", id: "11")
        // Updates sent from inside the remote's subscribe come before its reply.
        #expect(s.accepts(item: "feed1", id: "11"))
        s.replied("feed1", id: "11", success: true)
        #expect(s.entries["feed1"]?.phase == .active)
        #expect(!s.accepts(item: "feed1", id: "10"))
        #expect(!s.accepts(item: "other", id: "11"))
        let released = s.release("feed1")
        #expect(released)
        #expect(!s.accepts(item: "feed1", id: "11"))
        let again = s.release("feed1")
        #expect(!again)
    }

    @Test func aFailedSubscriptionIsForgotten() {
        var s = RemoteDataSubscriptions()
        s.want("a")
        s.sent("a", id: "12")
        s.replied("a", id: "12", success: false)
        #expect(!s.accepts(item: "a", id: "12"))
        #expect(s.wanted.isEmpty)
        // A stale reply under an older id changes nothing.
        s.want("b")
        s.sent("b", id: "20")
        s.replied("b", id: "13", success: false)
        #expect(s.accepts(item: "b", id: "20"))
    }

    @Test func aLostConnectionKeepsWhatTheEngineStillWants() {
        var s = RemoteDataSubscriptions()
        for (i, item) in ["b", "a", "c"].enumerated() {
            s.want(item)
            s.sent(item, id: String(i))
        }
        _ = s.release("c")
        #expect(s.connectionLost() == ["a", "b"])
        #expect(s.entries.isEmpty)
        #expect(!s.accepts(item: "a", id: "1"))
    }
}
