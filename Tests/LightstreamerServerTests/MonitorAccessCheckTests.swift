import Testing

@testable import LightstreamerServer

/// The MONITOR adapter's access check, called for every session that asks for the adapter set,
/// whoever asks.
@Suite struct MonitorAccessCheckTests {
    /// Each call reads the check out of its lock. Stored as a bare closure in the generic box,
    /// every read wrapped it in two more conversion thunks: the chain grew by one level per
    /// login attempt, each call walked all of it, and enough attempts overflowed the stack
    /// (this test's process died after some 45 s of a debug build, before its 100,000th; a
    /// release server spent 2.7 s on the first 5,000 attempts and 18.5 s on the eighth
    /// 5,000). With the check in a struct of its own: 100,000 attempts in well under a second.
    @Test func manyLoginAttemptsLeaveTheCheckAsItWas() async throws {
        let adapter = MonitorMetadataAdapter()
        adapter.attach { user, password, _ in user == "admin" && password == "secret" }
        var refused = 0
        for _ in 0..<100_000 {
            do {
                try await adapter.notifyUser(user: "guest", password: "x", headers: [:], clientIP: "127.0.0.1")
            } catch {
                refused += 1
            }
        }
        #expect(refused == 100_000)
        try await adapter.notifyUser(user: "admin", password: "secret", headers: [:], clientIP: "127.0.0.1")
    }
}
