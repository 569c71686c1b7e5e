import Testing

@testable import ARI

@Suite struct ARIRequestCorrelatorTests {
    @Test func idsAreUniqueAndClearOfTheReservedOnes() throws {
        var c = ARIRequestCorrelator<Int>(timeoutMillis: 1000, firstId: 0)
        var ids = Set<String>()
        for i in 0..<100 { ids.insert(try c.register(.subscribe, context: i, now: 0)) }
        #expect(ids.count == 100)
        #expect(!ids.contains("0") && !ids.contains("1") && !ids.contains("2"))
        #expect(c.count == 100)
    }

    @Test func aReplyMatchesOnceByIdAndMethod() throws {
        var c = ARIRequestCorrelator<String>(timeoutMillis: 1000)
        let a = try c.register(.subscribe, context: "a", now: 0)
        let b = try c.register(.getItems, context: "b", now: 0)
        guard case .matched(let p) = c.resolve(id: a, method: .subscribe) else {
            Issue.record("expected a match")
            return
        }
        #expect(p.context == "a" && p.method == .subscribe && p.deadline == 1000)
        guard case .unknownId = c.resolve(id: a, method: .subscribe) else {
            Issue.record("a second reply is unknown")
            return
        }
        guard case .methodMismatch(let q) = c.resolve(id: b, method: .getSchema) else {
            Issue.record("expected a mismatch")
            return
        }
        #expect(q.context == "b")
        #expect(c.count == 0)
        guard case .unknownId = c.resolve(id: "nope", method: .subscribe) else {
            Issue.record("unknown id")
            return
        }
    }

    @Test func requestsExpireInDeadlineOrderAndLateRepliesAreUnknown() throws {
        var c = ARIRequestCorrelator<Int>(timeoutMillis: 100)
        let first = try c.register(.subscribe, context: 1, now: 0)
        _ = try c.register(.subscribe, context: 2, now: 50)
        _ = try c.register(.notifyUser, context: 3, now: 10, timeoutMillis: 20)
        #expect(c.nextDeadline == 30)
        #expect(c.expire(now: 29).isEmpty)
        #expect(c.expire(now: 30).map(\.context) == [3])
        #expect(c.nextDeadline == 100)
        #expect(c.expire(now: 1000).map(\.context) == [1, 2])
        #expect(c.nextDeadline == nil)
        guard case .unknownId = c.resolve(id: first, method: .subscribe) else {
            Issue.record("a reply after the timeout is ignored")
            return
        }
    }

    @Test func answeredRequestsDoNotExpire() throws {
        var c = ARIRequestCorrelator<Int>(timeoutMillis: 100)
        let a = try c.register(.subscribe, context: 1, now: 0)
        _ = try c.register(.subscribe, context: 2, now: 0)
        _ = c.resolve(id: a, method: .subscribe)
        #expect(c.expire(now: 100).map(\.context) == [2])
    }

    @Test func pendingRequestsAreBounded() throws {
        var c = ARIRequestCorrelator<Int>(timeoutMillis: 100, maxPending: 3)
        for i in 0..<3 { _ = try c.register(.subscribe, context: i, now: 0) }
        #expect(throws: ARIRequestCorrelator<Int>.TooManyPending(limit: 3)) {
            _ = try c.register(.subscribe, context: 9, now: 0)
        }
        #expect(c.removeAll().map(\.context) == [0, 1, 2])
        #expect(c.count == 0)
        _ = try c.register(.subscribe, context: 4, now: 0)
    }

    @Test func manyAnsweredRequestsKeepTheDeadlineListSmall() throws {
        var c = ARIRequestCorrelator<Int>(timeoutMillis: 60_000, maxPending: 10)
        for i in 0..<100_000 {
            let id = try c.register(.subscribe, context: i, now: Int64(i))
            _ = c.resolve(id: id, method: .subscribe)
        }
        #expect(c.count == 0)
        #expect(c.nextDeadline == nil)
        #expect(c.expire(now: .max).isEmpty)
    }

    @Test func cancelAndSaturatedDeadlines() throws {
        var c = ARIRequestCorrelator<Int>(timeoutMillis: .max)
        let a = try c.register(.getItems, context: 1, now: .max - 5)
        #expect(c.nextDeadline == .max)
        #expect(c.cancel(id: a)?.context == 1)
        #expect(c.cancel(id: a) == nil)
    }
}
