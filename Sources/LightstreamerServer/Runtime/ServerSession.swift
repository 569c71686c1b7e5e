import Logging
import NIOCore
import Synchronization
import TLCP

/// Where a session writes: a WS, an HTTP stream response, or an HTTP control response. Calls
/// never block; they may come from any thread, and are carried out in call order.
public protocol OutboundConnection: AnyObject, Sendable {
    /// The connection's id.
    var connectionID: ConnectionID { get }
    /// The connection's transport.
    var transport: TransportKind { get }
    /// Appends text (whole lines) to the connection.
    func send(_ text: String)
    /// The stream on this connection is over (see `SessionStateMachine.Action.endStream`).
    func endStream(closeSocket: Bool)
    /// The reply to line `index` of an HTTP batch (nil: no line for it).
    func reply(index: Int, line: String?)
    /// `send(text)` then `endStream(closeSocket:)`, handed to the connection at once: whoever
    /// reads the last line (a `LOOP`) may act on it at once, so the stream must be over by then.
    func send(_ text: String, thenEndStream closeSocket: Bool)
}

extension OutboundConnection {
    /// Default: `send(_:)`, then `endStream(closeSocket:)`.
    public func send(_ text: String, thenEndStream closeSocket: Bool) {
        send(text)
        endStream(closeSocket: closeSocket)
    }
}

/// Milliseconds on the monotonic clock NIO schedules with.
func monotonicMillis() -> Int64 { Int64(NIODeadline.now().uptimeNanoseconds / 1_000_000) }

/// Runs one `SessionStateMachine`: feeds it events under a lock, carries out its actions
/// (writes in order, timers on an event loop, engine and adapter calls as tasks).
final class ServerSession: Sendable {
    let id: String
    let user: String?
    /// The address the session was created from (counted against `maxSessionsPerAddress`).
    let clientAddress: String?
    let adapterSet: AdapterSet
    let manager: SessionManager
    /// The transport of the create (log metadata).
    let createTransport: TransportKind?
    /// The server's logger with this session's metadata (`session`, `user`, `transport` of
    /// the create, `adapterSet`) on every line, so one session's story can be grepped. Made
    /// when a line is logged (a few times per session) rather than kept: its metadata
    /// dictionary would cost every idle session a few hundred bytes. Log through `log`, which
    /// makes it only for a line the server's level lets through.
    private var logger: Logger {
        var logger = manager.logger
        logger[metadataKey: "session"] = "\(id)"
        if let user { logger[metadataKey: "user"] = "\(user.logEscaped())" }
        if let createTransport { logger[metadataKey: "transport"] = "\(createTransport)" }
        logger[metadataKey: "adapterSet"] = "\(adapterSet.name)"
        return logger
    }

    /// Logs `message` at `level` with the session's metadata (`logger`), made only when the
    /// server logs that level. Building it is a couple of dozen short-lived allocations (the
    /// metadata's strings and dictionary): a server logging at `warning` made them for every
    /// session it created, for an `info` line it then dropped, and one at `info` for each
    /// `debug` line (a bind, a subscription) (BENCHMARKS.md, "Allocations of a session's
    /// creation").
    func log(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message, metadata: @autoclosure () -> Logger.Metadata? = nil) {
        guard manager.logger.logLevel <= level else { return }
        logger.log(level: level, message(), metadata: metadata())
    }

    /// What the session's lock guards.
    struct Inner {
        var machine: SessionStateMachine
        var connections = SessionConnections()
        /// Replies this session still owes to HTTP batch responses (dropped from `connections` at 0).
        var pendingReplies: [ConnectionID: Int] = [:]
        var handles: [Int: TableHandle] = [:]
        var infos: [Int: TableInfo] = [:]
        /// Armed timers (some on the loop's `KeepaliveWheel`).
        var timers = SessionTimers()
    }

    /// The session's state and, below, its inbox, each behind a lock of its own. Both are
    /// `Mutex`es stored in the object itself: a lock box (`NIOLockedValueBox`) is an
    /// allocation of its own with a 40-byte `pthread_mutex_t`, two more per session, idle or
    /// not, and one more pointer to follow on every batch.
    let inner: Mutex<Inner>

    private let inbox = Mutex(SessionInbox())
    /// The delivery pump of the session's event loop.
    let pump: DeliveryPump
    /// The session's event loop, the pump's (not kept twice: 16 bytes of every session).
    var eventLoop: any EventLoop { pump.eventLoop }
    let keepaliveWheel: KeepaliveWheel
    /// When the session was created (monotonic ms), for its age on the dashboard.
    let createdAtMillis = monotonicMillis()

    init(
        id: String, user: String?, clientAddress: String? = nil, adapterSet: AdapterSet, eventLoop: any EventLoop,
        manager: SessionManager, machine: SessionStateMachine, transport: TransportKind? = nil
    ) {
        self.createTransport = transport
        self.id = id
        self.user = user
        self.clientAddress = clientAddress
        self.adapterSet = adapterSet
        self.manager = manager
        self.inner = Mutex(Inner(machine: machine))
        self.pump = manager.pump(for: eventLoop)
        self.keepaliveWheel = manager.keepaliveWheel(for: eventLoop)
    }

    var resolver: SubscriptionResolver {
        SubscriptionResolver(
            adapterSet: adapterSet, user: user, sessionId: id,
            maxItems: manager.settings.maxItemsPerSubscription)
    }

    // MARK: - Engine events

    /// An engine event for subscription `id`, handed over from the loop's mailbox
    /// (`DeliveryPump`): usually on the session's event loop, on the producer's thread when
    /// the mailbox is full, or on an `unsubscribe`'s. Events queue here and reach the machine
    /// in batches on the session's event loop: one lock round and one merged write per batch
    /// instead of per event.
    ///
    /// Batches run on the loop through its `DeliveryPump`, a slice of time at a time, so that
    /// the loop keeps polling its sockets however fast events come. When `inboxLimit` events
    /// wait here (the loop is far behind), the engine's thread handles them itself: memory
    /// stays bounded and the producer slows down instead of queues growing. Before that, MERGE
    /// updates of one item fold into one (`SessionInbox`), so a loop that is behind sends the
    /// latest values and the limit is met only by events that must all be delivered.
    func enqueueTableEvent(
        _ id: Int, _ event: consuming TableEvent, mergeable: Bool, shared: consuming SharedUpdateEncoding? = nil
    ) {
        if case .overflow(_, let lost) = event { manager.metrics.update { $0.updatesLost += lost } }
        // Moved into the inbox (a closure cannot consume what it captures; an optional it
        // empties can): no retain of the row and encoding that all the update's sessions share.
        var pending: (TableEvent, SharedUpdateEncoding?)? = (event, shared)
        let next = inbox.withLock { box -> InboxNext in
            if let (event, shared) = pending.take() { box.append(id, event, mergeable: mergeable, shared: shared) }
            return Self.next(after: &box)
        }
        follow(next)
    }

    static let inboxLimit = 256

    /// What follows events put in the inbox.
    private enum InboxNext { case none, schedule, handleHere }

    /// Decided under the inbox's lock, once events are in: handle them on this thread at the
    /// limit, else have the pump run the batch unless it will already.
    private static func next(after box: inout SessionInbox) -> InboxNext {
        if box.count >= inboxLimit { return .handleHere }
        if box.drainScheduled || box.held { return .none }
        box.drainScheduled = true
        return .schedule
    }

    private func follow(_ next: InboxNext) {
        switch next {
        case .none: break
        case .handleHere: handleInbox()
        case .schedule: pump.add(self)
        }
    }

    /// `enqueueTableEvent` for consecutive events of subscription `id`, taken from `run` (which
    /// is left empty): one lock round for all of them, unless the inbox reaches `inboxLimit`
    /// on the way (then this thread handles it, as `enqueueTableEvent` does, and goes on).
    ///
    /// With `handleNow` (the loop's own hand-over, keeping up), on the session's event loop
    /// and with nothing waiting in the inbox, the run goes straight to the machine instead, in
    /// the same order: nothing is behind it to conflate with, and the round through the inbox
    /// (its lock twice, the pump's lock and ready list, a second pass over the session's
    /// memory) is saved. Otherwise (a full mailbox handed over by the producer, an
    /// `unsubscribe`, a loop that fell behind), or behind waiting events, the run waits in the
    /// inbox.
    func enqueueTableEvents(_ id: Int, _ run: inout [QueuedTableEvent], mergeable: Bool, handleNow: Bool) {
        if handleNow, eventLoop.inEventLoop, inbox.withLock({ $0.count == 0 && !$0.held }) {
            var lost = 0
            self.run { m, now in m.tableEvents(subscriptionId: id, run: &run, lost: &lost, now: now) }
            if lost > 0 { manager.metrics.update { $0.updatesLost += lost } }
            return
        }
        run.reverseInPlace()
        var lost = 0
        while !run.isEmpty {
            let next = inbox.withLock { box -> InboxNext in
                while box.count < Self.inboxLimit, let event = run.popLast() {
                    lost &+= event.move(into: &box, subscriptionId: id, mergeable: mergeable)
                }
                return Self.next(after: &box)
            }
            follow(next)
        }
        if lost > 0 { manager.metrics.update { $0.updatesLost += lost } }
    }

    /// How the session is connected right now and what waits for it (the `MONITOR` adapter set).
    func summary(now: Int64) -> SessionSummary {
        let (binding, subscriptions) = inner.withLock { ($0.machine.binding, $0.machine.activeSubscriptionCount) }
        let transport =
            binding.map { b in
                (b.transport == .webSocket ? "WS" : "HTTP") + (b.polling ? "-POLLING" : "-STREAMING")
            } ?? "UNBOUND"
        let backlog = inbox.withLock { $0.count }
        return SessionSummary(
            id: id, user: user, address: clientAddress, adapterSet: adapterSet.name, transport: transport,
            ageMillis: max(0, now - createdAtMillis), backlog: backlog, subscriptions: subscriptions)
    }

    /// Runs the waiting batch (called by the pump, on the session's event loop), unless the
    /// stream's socket is full (`outputBlocked`): the batch then waits for it to drain.
    func drainInbox() {
        run { m, now in
            // One round of the inbox's lock, under the session's (what is taken is handled
            // before anything queued after it): a held inbox keeps its events.
            let (events, conflated) = self.inbox.withLock { box -> ([SessionInbox.Entry], Int) in
                box.drainScheduled = false
                return box.held ? ([], 0) : (box.take(), box.takeConflatedCount())
            }
            if conflated > 0 { self.manager.metrics.update { $0.updatesConflated += conflated } }
            return events.isEmpty ? [] : m.tableEvents(events, now: now)
        }
    }

    /// The socket of the session's stream, on `connection`, is full (`blocked`), or drained
    /// again. While it is full, table events wait in the inbox, where each MERGE item's
    /// updates fold into the latest (`SessionInbox`), rather than being written behind bytes
    /// the client has not read: a client that reads slower than its updates come gets the
    /// latest values when it reads, the server holds one row per item rather than a growing
    /// backlog, and what must all be delivered (DISTINCT, RAW, COMMAND, `unfiltered`) still
    /// goes out once `inboxLimit` events wait, towards `maxBacklogBytes`. Told by the
    /// connection's handler when its writability changes (`WebSocketTLCPHandler`, which tells
    /// the drain too, and `HTTPTLCPHandler` for a stream response), when the stream ends and
    /// when the connection goes.
    ///
    /// The hold belongs to `connection`: a connection the session is not bound to cannot hold
    /// it (a socket the session left fills up after the session moved), and only the
    /// connection that holds it lets go (the socket the session left, draining or closing
    /// after the new one filled up, does not release the new one's hold). A bind elsewhere
    /// drops it (`streamBound(to:)`).
    func outputBlocked(_ blocked: Bool, on connection: ConnectionID) {
        let schedule = inner.withLock { s -> Bool in
            // The session's lock, then the inbox's (the order `drainInbox` takes them in).
            let bound = s.machine.boundConnection == connection
            return inbox.withLock { box -> Bool in
                if blocked {
                    if bound { box.heldBy = connection.raw }
                    return false
                }
                guard box.heldBy == connection.raw else { return false }
                return Self.release(&box)
            }
        }
        if schedule { pump.add(self) }
    }

    /// A stream was bound on `connection`: a hold that another connection set goes (that
    /// socket's state says nothing about the new one, whose handler tells its own).
    func streamBound(to connection: ConnectionID) {
        let schedule = inbox.withLock { box -> Bool in
            guard box.held, box.heldBy != connection.raw else { return false }
            return Self.release(&box)
        }
        if schedule { pump.add(self) }
    }

    /// Lets the inbox go; whether the caller must have the pump drain what waits.
    private static func release(_ box: inout SessionInbox) -> Bool {
        box.heldBy = 0
        guard box.count > 0, !box.drainScheduled else { return false }
        box.drainScheduled = true
        return true
    }

    /// Handles what waits now, on the calling thread (the scheduled drain finds less or nothing).
    private func handleInbox() {
        run { m, now in
            let events = self.takeInbox()
            return events.isEmpty ? [] : m.tableEvents(events, now: now)
        }
    }

    /// Events queued so far (called with the session locked, so that they are handled before
    /// what the caller does next).
    func takeInbox() -> [SessionInbox.Entry] {
        inbox.withLock { $0.take() }
    }

    // MARK: - Views for the manager and tests

    var isClosed: Bool { inner.withLock { $0.machine.isClosed } }
    var boundConnection: ConnectionID? { inner.withLock { $0.machine.boundConnection } }
}

/// Delivers one subscription's engine events to its session, through the mailbox of the
/// session's event loop (`DeliveryPump`).
final class SessionTableSink: QueuedTableSink {
    let session: ServerSession
    let subscriptionId: Int
    /// MERGE and not `unfiltered`: updates waiting in the inbox may be conflated.
    let mergeable: Bool

    init(session: ServerSession, subscriptionId: Int, mergeable: Bool) {
        self.session = session
        self.subscriptionId = subscriptionId
        self.mergeable = mergeable
    }

    func deliver(_ event: TableEvent) {
        session.enqueueTableEvent(subscriptionId, event, mergeable: mergeable)
    }

    func deliver(_ event: consuming TableEvent, shared: consuming SharedUpdateEncoding?) {
        session.enqueueTableEvent(subscriptionId, event, mergeable: mergeable, shared: shared)
    }

    func deliver(run: inout [QueuedTableEvent], handleNow: Bool) {
        session.enqueueTableEvents(subscriptionId, &run, mergeable: mergeable, handleNow: handleNow)
    }

    var queue: any TableEventQueue { session.pump }
}

extension QueuedTableEvent {
    /// Moves the event into `box` as subscription `id`'s; returns the updates it reports lost
    /// (`OV`), for the metrics.
    consuming func move(into box: inout SessionInbox, subscriptionId id: Int, mergeable: Bool) -> Int {
        let lost = payload.lostUpdates
        box.append(id, payload, mergeable: mergeable)
        return lost
    }
}
