import Synchronization
import TLCP

/// Entry point for `Benchmarks/Sources/server-ops` (SPI, not public API): the server's update
/// path from the adapter to the session's output text, without sockets, event loops or locks
/// held across threads, on one thread, so that valgrind can count its instructions and cache
/// misses per delivered update, whatever else the machine is doing (the loopback load test
/// spreads by ±10 % on a shared machine, more than most single steps save).
///
/// What runs: a Data Adapter update enters the real `ItemEngine` (projection, shared encodings,
/// the delivery gate, posts grouped by queue); the posts are handed to the sessions' real
/// `SessionInbox`es as a loop's `DeliveryPump` does (straight to the machine when the inbox is
/// empty, as on the session's loop); each session's batch runs through its real
/// `SessionStateMachine` (the `U` lines, the recovery log, the output). What does not: the
/// pump's and the sessions' locks, the outbound queue, NIO's write path and the kernel.
@_spi(Benchmarks)
public final class FanOutBench: @unchecked Sendable {
    private let feed = BenchFeed()
    private let engine: ItemEngine
    private let queue = BenchQueue()
    private var sessions: [BenchSession] = []
    private let itemNames: [String]
    private var now: Int64 = 1_000
    private var tickCount = 0

    /// `sessions` WebSocket sessions, each subscribed in MERGE mode to `itemsPerSession` of
    /// `items` items (field `ts`), spread evenly, as in the loopback load test.
    public init(sessions: Int, items: Int, itemsPerSession: Int) async throws {
        engine = ItemEngine(
            adapterSets: [AdapterSet(name: "BENCH", metadata: LiteralBasedMetadataAdapter(), dataAdapters: ["DEFAULT": feed])],
            clock: ManualEngineClock())
        itemNames = (0..<max(1, items)).map { "item\($0)" }
        var settings = SessionSettings()
        settings.recoveryWindowMillis = 2_000
        for s in 0..<sessions {
            let session = BenchSession(index: s, items: itemsPerSession, settings: settings, now: now, queue: queue)
            let names = (0..<itemsPerSession).map { itemNames[(s * itemsPerSession + $0) % itemNames.count] }
            let spec = TableSpec(
                adapterSet: "BENCH", dataAdapter: "DEFAULT", mode: .merge, items: names, fields: ["ts"], selector: nil,
                snapshot: .no, maxFrequency: .unlimited, bufferSize: nil)
            _ = try await engine.subscribe(spec, sink: session.sink)
            self.sessions.append(session)
        }
    }

    /// One producer tick: every item updated once (`ts` = the tick's number), item by item or
    /// as one batch (`ItemEventListener.update(_:)`), then the posts handed to the sessions'
    /// inboxes and every session's batch run. Returns the `U` lines the sessions wrote.
    @discardableResult
    public func tick(batched: Bool = false) -> Int {
        tickCount += 1
        now += 100
        let ts = String(1_000_000_000 + tickCount)
        if batched {
            feed.update(itemNames.map { ItemUpdateEvent(item: $0, fields: ["ts": ts]) })
        } else {
            for item in itemNames { feed.update(item: item, ts: ts) }
        }
        var posted = queue.take()
        for session in sessions { session.now = now }
        // As the loop's hand-over (`DeliveryPump`): sessions handle their runs at once only
        // when it holds a single post or the posts of one round (a batched tick), else
        // everything goes to the inboxes.
        posted.handOver(handleNow: posted.isOnePost)
        var lines = 0
        for session in sessions { lines += session.runBatch(now: now) }
        return lines
    }
}

/// The benchmark's Data Adapter: updates only when told.
private final class BenchFeed: DataAdapter, @unchecked Sendable {
    private var listener: (any ItemEventListener)?
    func setListener(_ listener: any ItemEventListener) { self.listener = listener }
    func subscribe(item: String) async throws {}
    func unsubscribe(item: String) async {}
    func isSnapshotAvailable(item: String) -> Bool { false }
    func update(item: String, ts: String) { listener?.update(item: item, fields: ["ts": ts], isSnapshot: false) }
    func update(_ batch: [ItemUpdateEvent]) { listener?.update(batch) }
}

/// The benchmark's loop mailbox: keeps the posts until the tick hands them over.
private final class BenchQueue: TableEventQueue, @unchecked Sendable {
    private var mailbox = PostedEvents()
    func post(_ events: inout [QueuedTableEvent], round: UInt64) -> Bool {
        mailbox.append(moving: &events, round: round)
        return false
    }
    func flush() {}
    func take() -> PostedEvents {
        defer { mailbox = PostedEvents() }
        return mailbox
    }
}

/// One session: its inbox and its machine, bound to a WebSocket stream, one subscription.
///
/// Kept as the server's session keeps them (`ServerSession`): the inbox behind a lock of its
/// own, taken per event handed over, the machine behind the session's lock (here one thread,
/// so `@exclusivity(unchecked)`, the lock's own cost being the inbox's). As plain class
/// properties they cost dynamic exclusivity checks, some 150 instructions per update, that
/// the server does not spend, and left out the inbox's lock, which it does (BENCHMARKS.md,
/// "Batches posted without the outboxes").
private final class BenchSession: @unchecked Sendable {
    @exclusivity(unchecked) var machine: SessionStateMachine
    let inbox = Mutex(SessionInbox())
    /// The tick's time, and the `U` lines written straight from the hand-over since the last
    /// `runBatch`.
    @exclusivity(unchecked) var now: Int64
    @exclusivity(unchecked) var lines = 0
    private(set) var sink: BenchSink!

    init(index: Int, items: Int, settings: SessionSettings, now: Int64, queue: BenchQueue) {
        self.now = now
        let connection = ConnectionID(UInt64(index + 1))
        machine = SessionStateMachine(
            sessionId: "S\(index)", version: .v2_5, create: CreateSessionRequest(), connection: connection,
            transport: .webSocket, clientIP: "127.0.0.1", allowedMaxBandwidth: nil, settings: settings, now: now)
        _ = machine.start(now: now)
        let add = SubscribeParameters(subscriptionId: 1, mode: .merge, group: "g", schema: "ts")
        _ = machine.control(ControlRequest(requestId: "1", operation: .add(add), ack: nil), origin: .webSocket(connection), now: now)
        _ = machine.subscribeSucceeded(1, grant: SubscriptionGrant(itemCount: items, fieldCount: 1), now: now)
        sink = BenchSink(session: self, queue: queue)
    }

    /// The `U` lines that `actions` write.
    static func updatesWritten(_ actions: some Sequence<SessionStateMachine.Action>) -> Int {
        var lines = 0
        for action in actions { if case .write(_, _, let updates) = action { lines += updates } }
        return lines
    }

    /// Runs the waiting batch; returns the `U` lines written.
    func runBatch(now: Int64) -> Int {
        var lines = self.lines
        self.lines = 0
        let events = inbox.withLock { $0.take() }
        guard !events.isEmpty else { return lines }
        lines += Self.updatesWritten(machine.tableEvents(events, now: now))
        return lines
    }
}

private final class BenchSink: QueuedTableSink, @unchecked Sendable {
    unowned let session: BenchSession
    let queue: any TableEventQueue

    init(session: BenchSession, queue: BenchQueue) {
        self.session = session
        self.queue = queue
    }

    func deliver(_ event: TableEvent) { deliver(event, shared: nil) }

    /// As `ServerSession.enqueueTableEvents` on the session's loop with an empty inbox: the
    /// run straight to the machine (the inbox's lock checked once, as there).
    func deliver(run: inout [QueuedTableEvent], handleNow: Bool) {
        guard handleNow, session.inbox.withLock({ $0.count == 0 }) else {
            run.reverseInPlace()
            session.inbox.withLock { box in
                while let event = run.popLast() { _ = event.move(into: &box, subscriptionId: 1, mergeable: true) }
            }
            return
        }
        var lost = 0
        session.lines += BenchSession.updatesWritten(
            session.machine.tableEvents(subscriptionId: 1, run: &run, lost: &lost, now: session.now))
    }

    func deliver(_ event: consuming TableEvent, shared: consuming SharedUpdateEncoding?) {
        // As `ServerSession.enqueueTableEvent`: moved into the inbox through an optional.
        var pending: (TableEvent, SharedUpdateEncoding?)? = (event, shared)
        session.inbox.withLock { box in
            if let (event, shared) = pending.take() { box.append(1, event, mergeable: true, shared: shared) }
        }
    }
}
