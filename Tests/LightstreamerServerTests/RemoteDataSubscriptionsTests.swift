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

    /// A remote that becomes ready while the engine's `subscribe` of an item is on its way
    /// (wanted, `SUB` not sent yet) is not asked for it a second time.
    @Test func aSubscribeOnItsWayIsNotSentAgainToANewRemote() {
        var s = RemoteDataSubscriptions()
        s.want("a")
        #expect(s.toSubscribeAgain.isEmpty)
        s.sent("a", id: "11")
        s.want("b")
        _ = s.connectionLost()
        // "a" was on the old remote: the new one must get it; "b" is still on its way.
        #expect(s.toSubscribeAgain == ["a"])
        s.sent("a", id: "12")
        s.sent("b", id: "13")
        #expect(s.toSubscribeAgain.isEmpty)
        // A subscribe that failed before sending leaves nothing behind.
        s.want("c")
        _ = s.release("c")
        #expect(s.starting.isEmpty && !s.wanted.contains("c"))
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
