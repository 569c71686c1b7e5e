import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TLCP
import Testing

@testable import LightstreamerServer

/// `ServerSession.enqueueTableEvents`: on the session's loop with an empty inbox, a run goes
/// straight to the machine (its line is written before the call returns); behind events that
/// wait in the inbox, it waits too, and the lines keep the order the events came in.
@Suite struct SessionDirectDeliveryTests {
    /// Records what the session writes.
    final class Connection: OutboundConnection, @unchecked Sendable {
        let connectionID: ConnectionID
        init(_ raw: UInt64 = 1) { connectionID = ConnectionID(raw) }
        var transport: TransportKind { .webSocket }
        private let text = NIOLockedValueBox("")
        func send(_ text: String) { self.text.withLockedValue { $0 += text } }
        func endStream(closeSocket: Bool) {}
        func reply(index: Int, line: String?) {}
        /// The values of the `U` lines written so far, in order.
        var updates: [String] {
            text.withLockedValue { $0 }.split(separator: "\r\n").compactMap { line in
                line.hasPrefix("U,1,1,") ? String(line.dropFirst(6)) : nil
            }
        }
        var written: String { text.withLockedValue { $0 } }
    }

    /// A Data Adapter that never updates by itself.
    final class Quiet: DataAdapter, @unchecked Sendable {
        func setListener(_ listener: any ItemEventListener) {}
        func subscribe(item: String) async throws {}
        func unsubscribe(item: String) async {}
        func isSnapshotAvailable(item: String) -> Bool { false }
    }

    /// A sink for the events built here (`enqueueTableEvents` does not use it).
    final class NoSink: QueuedTableSink, @unchecked Sendable {
        let queue: any TableEventQueue
        init(queue: any TableEventQueue) { self.queue = queue }
        func deliver(_ event: TableEvent) {}
        func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) {}
    }

    /// A session on `loop`, subscribed (id 1, MERGE, one item, field `ts`).
    static func subscribedSession(on loop: any EventLoop) async throws -> (ServerSession, Connection) {
        let engine = ItemEngine(adapterSets: [
            AdapterSet(name: "DEFAULT", metadata: LiteralBasedMetadataAdapter(), dataAdapters: ["DEFAULT": Quiet()])
        ])
        let manager = SessionManager(
            engine: engine, settings: SessionSettings(), metrics: ServerMetrics(), logger: .init(label: "test"))
        let connection = Connection()
        let created = await manager.createSession(
            CreateSessionRequest(), version: .current, connection: connection, clientIP: "127.0.0.1", headers: [:],
            eventLoop: loop)
        guard case .success(let id) = created, let session = manager.session(id) else {
            Issue.record("no session: \(created)")
            throw CancellationError()
        }
        let add = SubscribeParameters(subscriptionId: 1, mode: .merge, group: "g", schema: "ts")
        session.run { m, now in
            m.control(ControlRequest(requestId: "1", operation: .add(add), ack: nil), origin: .webSocket(connection.connectionID), now: now)
        }
        await waitUntil { connection.written.contains("SUBOK,1,") }
        #expect(connection.written.contains("SUBOK,1,"))
        return (session, connection)
    }

    static func run(_ values: ClosedRange<Int>, on session: ServerSession) -> [QueuedTableEvent] {
        let sink = NoSink(queue: session.pump)
        return values.map { QueuedTableEvent(sink: sink, event: .update(item: 1, values: ["\($0)"], isSnapshot: false), shared: nil) }
    }

    @Test func onItsLoopWithNothingWaitingARunIsWrittenAtOnce() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let (session, connection) = try await Self.subscribedSession(on: loop)
        let seen = try await loop.submit { () -> [String] in
            var run = Self.run(1...3, on: session)
            session.enqueueTableEvents(1, &run, mergeable: true, handleNow: true)
            // Still inside the loop's task: no pump run has happened since.
            return connection.updates
        }.get()
        #expect(seen == ["1", "2", "3"])
        try await group.shutdownGracefully()
    }

    /// Updates 1…3 queued off the loop while it is held, then 4…6 handed over on the loop as
    /// a run it may handle at once: returns what the client had when the loop's run returned,
    /// and the client's updates once `settled` says they are all there (or after 5 s), and a
    /// moment more.
    static func runBehindWaitingEvents(
        mergeable: Bool, settled: @escaping @Sendable ([String]) -> Bool
    ) async throws -> (
        seenOnLoop: [String], seen: [String]
    ) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let (session, connection) = try await Self.subscribedSession(on: loop)
        // Holds the loop, so that what this thread queues is still waiting when the loop's
        // own run comes.
        let release = DispatchSemaphore(value: 0)
        loop.execute { release.wait() }
        let onLoop = loop.submit { () -> [String] in
            var run = Self.run(4...6, on: session)
            session.enqueueTableEvents(1, &run, mergeable: mergeable, handleNow: true)
            return connection.updates
        }
        // Off the loop: into the inbox (the pump's run is queued behind the task above).
        var first = Self.run(1...3, on: session)
        session.enqueueTableEvents(1, &first, mergeable: mergeable, handleNow: true)
        release.signal()
        let seenOnLoop = try await onLoop.get()
        await waitUntil { settled(connection.updates) }
        // Nothing more comes after.
        try await Task.sleep(for: .milliseconds(100))
        let seen = connection.updates
        try await group.shutdownGracefully()
        return (seenOnLoop, seen)
    }

    /// Not mergeable (as RAW, DISTINCT, COMMAND or `unfiltered` are), so that every event shows
    /// where it went; the same with MERGE folds (`behindAMergeRunFoldsIntoWhatWaits`).
    @Test func behindWaitingEventsARunWaitsAndKeepsItsPlace() async throws {
        let (seenOnLoop, seen) = try await Self.runBehindWaitingEvents(mergeable: false) { $0.count >= 6 }
        #expect(seenOnLoop.isEmpty, "the loop's run went behind the waiting events: \(seenOnLoop)")
        #expect(seen == ["1", "2", "3", "4", "5", "6"])
    }

    /// The same with MERGE: the loop's run joins the waiting events, and the item's updates
    /// fold into the latest (`SessionInbox`), so the client gets its latest row once.
    @Test func behindAMergeRunFoldsIntoWhatWaits() async throws {
        let (seenOnLoop, seen) = try await Self.runBehindWaitingEvents(mergeable: true) { !$0.isEmpty }
        #expect(seenOnLoop.isEmpty, "the loop's run went behind the waiting events: \(seenOnLoop)")
        #expect(seen == ["6"])
    }
}
