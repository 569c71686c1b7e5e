import Testing

@testable import ARI

@Suite struct ARIClientOutcomeTests {
    func outcome(_ e: ARIErrorReply, _ m: ARIMethod) -> ARIClientOutcome { .forError(e, on: m) }

    @Test func loginRefusals() {
        #expect(outcome(.credits(message: "m", code: -5, userMessage: "No"), .notifyUser) == .conerr(code: -5, message: "No"))
        #expect(outcome(.credits(message: "m", code: -5, userMessage: nil), .notifyUserAuth) == .conerr(code: -5, message: ""))
        #expect(
            outcome(.conflictingSession(message: nil, code: -2, userMessage: "dup", sessionId: "S"), .notifyUser)
                == .conerr(code: -2, message: "dup"))
        #expect(outcome(.access(message: "bad"), .notifyUser) == .conerr(code: 1, message: "bad"))
        #expect(outcome(.resourceUnavailable(message: nil), .notifyUser) == .conerr(code: 6, message: "Retry later"))
        #expect(
            outcome(.generic(message: "NullPointerException at …"), .notifyUser)
                == .conerr(code: 66, message: "Metadata Adapter error"))
        #expect(outcome(.notification(message: "x"), .notifyNewSession) == .conerr(code: 66, message: "Metadata Adapter error"))
        #expect(
            outcome(.credits(message: nil, code: -9, userMessage: "max sessions"), .notifyNewSession)
                == .conerr(code: -9, message: "max sessions"))
    }

    @Test func positiveOrHugeCodesStayOutOfTheServersRange() {
        #expect(outcome(.credits(message: nil, code: 5, userMessage: "u"), .notifyUser) == .conerr(code: 1, message: "u"))
        #expect(outcome(.credits(message: nil, code: 5, userMessage: "u"), .notifyUserMessage) == .msgfail(code: 0, message: "u"))
        #expect(
            outcome(.credits(message: nil, code: Int.min, userMessage: "u"), .notifyNewTables)
                == .reqerr(code: Int(Int32.min), message: "u"))
    }

    @Test func subscriptionRefusals() {
        #expect(outcome(.items(message: "no"), .getItems) == .reqerr(code: 21, message: "no"))
        #expect(outcome(.generic(message: "x"), .getItems) == .reqerr(code: 66, message: "Metadata Adapter error"))
        #expect(outcome(.items(message: nil), .getSchema) == .reqerr(code: 22, message: "Bad item group for this schema"))
        #expect(outcome(.schema(message: "s"), .getSchema) == .reqerr(code: 23, message: "s"))
        #expect(outcome(.generic(message: nil), .getItemData) == .reqerr(code: 66, message: "Metadata Adapter error"))
        #expect(outcome(.generic(message: nil), .getUserItemData) == .reqerr(code: 66, message: "Metadata Adapter error"))
        #expect(outcome(.credits(message: nil, code: -1, userMessage: "busy"), .notifyNewTables) == .reqerr(code: -1, message: "busy"))
        #expect(outcome(.notification(message: nil), .notifyNewTables) == .reqerr(code: 66, message: "Metadata Adapter error"))
    }

    @Test func messageRefusals() {
        #expect(
            outcome(.credits(message: "m", code: -5, userMessage: "No chat for you"), .notifyUserMessage)
                == .msgfail(code: -5, message: "No chat for you"))
        #expect(outcome(.notification(message: "nope"), .notifyUserMessage) == .msgfail(code: 34, message: "nope"))
        #expect(outcome(.generic(message: "crash"), .notifyUserMessage) == .msgfail(code: 35, message: "Metadata Adapter error"))
    }

    @Test func mpnRefusals() {
        for m in [ARIMethod.mpnDeviceAccess, .mpnSubscriptionActivation, .mpnDeviceTokenChange] {
            #expect(outcome(.credits(message: nil, code: -8, userMessage: "veto"), m) == .reqerr(code: -8, message: "veto"))
            #expect(outcome(.generic(message: nil), m) == .reqerr(code: 66, message: "Metadata Adapter error"))
            #expect(outcome(.notification(message: nil), m) == .reqerr(code: 66, message: "Metadata Adapter error"))
        }
    }

    @Test func dataAndLifecycleErrorsReachNoClientDirectly() {
        for (e, m) in [
            (ARIErrorReply.subscription(message: nil), ARIMethod.subscribe), (.failure(message: nil), .unsubscribe),
            (.dataProvider(message: nil), .dataInit), (.metadataProvider(message: nil), .metadataInit),
            (.notification(message: nil), .notifySessionClose), (.generic(message: nil), .notifyTablesClose),
        ] {
            #expect(outcome(e, m) == .notClientVisible)
        }
    }

    @Test func noReplyInTime() {
        #expect(ARIClientOutcome.forNoReply(on: .notifyUser) == .conerr(code: 6, message: "Metadata Adapter not answering, retry later"))
        #expect(ARIClientOutcome.forNoReply(on: .notifyNewSession) == .conerr(code: 66, message: "Metadata Adapter not answering"))
        #expect(ARIClientOutcome.forNoReply(on: .getSchema) == .reqerr(code: 68, message: "Metadata Adapter not answering"))
        #expect(ARIClientOutcome.forNoReply(on: .notifyUserMessage) == .msgfail(code: 35, message: "Metadata Adapter not answering"))
        #expect(ARIClientOutcome.forNoReply(on: .subscribe) == .notClientVisible)
    }
}
