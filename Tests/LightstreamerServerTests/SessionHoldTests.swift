import NIOPosix
import TLCP
import Testing

@testable import LightstreamerServer

/// `ServerSession.outputBlocked(_:on:)`: the hold on a session's table events belongs to the
/// connection whose socket is full. A bind elsewhere drops it; the connection the session
/// left can neither set it again nor let go of the new connection's.
@Suite struct SessionHoldTests {
    /// Records what the session writes to it, under its own number.
    typealias Recorder = SessionDirectDeliveryTests.Connection

    /// Queues update `value` off the session's loop (into the inbox, drained by the pump).
    static func update(_ value: Int, _ session: ServerSession) {
        var run = SessionDirectDeliveryTests.run(value...value, on: session)
        session.enqueueTableEvents(1, &run, mergeable: true, handleNow: false)
    }

    /// Waits up to 10 s for `recorder` to have `count` updates.
    static func waitFor(_ count: Int, on recorder: Recorder) async throws {
        await waitUntil { recorder.updates.count >= count }
    }

    @Test func aBindElsewhereDropsTheHoldAndTheLeftConnectionCannotTakeItBack() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (session, first) = try await SessionDirectDeliveryTests.subscribedSession(on: group.next())
        session.outputBlocked(true, on: first.connectionID)
        Self.update(1, session)
        try await Task.sleep(for: .milliseconds(200))
        #expect(first.updates.isEmpty, "held while the first socket is full: \(first.updates)")

        let second = Recorder(2)
        let bound = session.manager.bind(
            BindSessionRequest(session: session.id), sessionId: session.id, version: .current, connection: second,
            clientIP: nil)
        #expect(bound)
        try await Self.waitFor(1, on: second)
        #expect(second.updates == ["1"], "the held update goes to the new connection")

        // The socket the session left fills up, or says so late: it no longer holds the session.
        session.outputBlocked(true, on: first.connectionID)
        Self.update(2, session)
        try await Self.waitFor(2, on: second)
        #expect(second.updates == ["1", "2"])

        // The new socket fills up; the old one draining does not let its hold go.
        session.outputBlocked(true, on: second.connectionID)
        Self.update(3, session)
        session.outputBlocked(false, on: first.connectionID)
        try await Task.sleep(for: .milliseconds(200))
        #expect(second.updates == ["1", "2"], "held by the second socket: \(second.updates)")
        session.outputBlocked(false, on: second.connectionID)
        try await Self.waitFor(3, on: second)
        #expect(second.updates == ["1", "2", "3"])
        #expect(first.updates.isEmpty)
        try await group.shutdownGracefully()
    }
}
