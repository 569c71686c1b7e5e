import Logging
import NIOConcurrencyHelpers
import NIOCore
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
    /// The stream on this connection is over (see `SessionAction.endStream`).
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
    let eventLoop: any EventLoop
    let manager: SessionManager
    /// The transport of the create (log metadata).
    let createTransport: TransportKind?
    /// The server's logger with this session's metadata (`session`, `user`, `transport` of
    /// the create, `adapterSet`) on every line, so one session's story can be grepped. Made
    /// when a line is logged (a few times per session) rather than kept: its metadata
    /// dictionary would cost every idle session a few hundred bytes.
    var logger: Logger {
        var logger = manager.logger
        logger[metadataKey: "session"] = "\(id)"
        if let user { logger[metadataKey: "user"] = "\(user.logEscaped())" }
        if let createTransport { logger[metadataKey: "transport"] = "\(createTransport)" }
        logger[metadataKey: "adapterSet"] = "\(adapterSet.name)"
        return logger
    }

    private struct Inner {
        var machine: SessionStateMachine
        var connections: [ConnectionID: any OutboundConnection] = [:]
        /// Replies this session still owes to HTTP batch responses (dropped from `connections` at 0).
        var pendingReplies: [ConnectionID: Int] = [:]
        var handles: [Int: any Sendable] = [:]
        var infos: [Int: TableInfo] = [:]
        /// Armed timers; `task` is nil for the keepalive timers the loop's `KeepaliveWheel` fires.
        var timers: [SessionTimer: (generation: UInt64, task: Scheduled<Void>?)] = [:]
        var timerGeneration: UInt64 = 0
    }

    private let inner: NIOLockedValueBox<Inner>


    private let inbox = NIOLockedValueBox(SessionInbox())
    private let pump: DeliveryPump
    private let keepaliveWheel: KeepaliveWheel
    /// When the session was created (monotonic ms), for its age on the dashboard.
    let createdAtMillis = monotonicMillis()

    init(id: String, user: String?, clientAddress: String? = nil, adapterSet: AdapterSet, eventLoop: any EventLoop,
         manager: SessionManager, machine: SessionStateMachine, transport: TransportKind? = nil) {
        self.createTransport = transport
        self.id = id
        self.user = user
        self.clientAddress = clientAddress
        self.adapterSet = adapterSet
        self.eventLoop = eventLoop
        self.manager = manager
        self.inner = NIOLockedValueBox(Inner(machine: machine))
        self.pump = manager.pump(for: eventLoop)
        self.keepaliveWheel = manager.keepaliveWheel(for: eventLoop)
    }

    var resolver: SubscriptionResolver { SubscriptionResolver(adapterSet: adapterSet, user: user, sessionId: id,
                                                                   maxItems: manager.settings.maxItemsPerSubscription) }

    /// Feeds one event. `connection` is registered first so the machine's actions can reach it.
    func run(registering connection: (any OutboundConnection)? = nil, expectingReply: Bool = false,
             _ event: (inout SessionStateMachine, Int64) -> [SessionAction]) {
        var deferred: [SessionAction] = []
        inner.withLockedValue { s in
            if let connection {
                s.connections[connection.connectionID] = connection
                if expectingReply { s.pendingReplies[connection.connectionID, default: 0] += 1 }
            }
            let actions = event(&s.machine, monotonicMillis())
            var skipNext = false
            for (i, action) in actions.enumerated() {
                if skipNext {
                    skipNext = false
                    continue
                }
                switch action {
                case .write(let conn, let text, let updates):
                    guard let c = s.connections[conn] else { continue }
                    manager.metrics.sent(bytes: text.utf8.count, updates: updates)
                    if i + 1 < actions.count, case .endStream(conn, let closeSocket) = actions[i + 1] {
                        // The last lines of a stream (LOOP, END) and its end travel together.
                        skipNext = true
                        c.send(text, thenEndStream: closeSocket)
                        if c.transport == .http { s.connections[conn] = nil }
                    } else {
                        c.send(text)
                    }
                case .endStream(let conn, let closeSocket):
                    guard let c = s.connections[conn] else { continue }
                    c.endStream(closeSocket: closeSocket)
                    if c.transport == .http { s.connections[conn] = nil }
                case .httpReply(let conn, let index, let line):
                    s.connections[conn]?.reply(index: index, line: line)
                    if let n = s.pendingReplies[conn] {
                        if n <= 1 {
                            s.pendingReplies[conn] = nil
                            s.connections[conn] = nil
                        } else {
                            s.pendingReplies[conn] = n - 1
                        }
                    }
                case .armTimer(let timer, let at):
                    s.timers[timer]?.task?.cancel()
                    s.timerGeneration += 1
                    let generation = s.timerGeneration
                    if timer == .keepalive,
                       keepaliveWheel.arm(self, timer, generation: generation, atMillis: at, now: monotonicMillis()) {
                        s.timers[timer] = (generation, nil)
                        continue
                    }
                    let deadline = NIODeadline.uptimeNanoseconds(Saturating.uptimeNanoseconds(millis: at))
                    let task = eventLoop.scheduleTask(deadline: deadline) { [self] in
                        self.timerFired(timer, generation: generation)
                    }
                    s.timers[timer] = (generation, task)
                case .cancelTimer(let timer):
                    s.timers.removeValue(forKey: timer)?.task?.cancel()
                case .unsubscribe(let id):
                    let handle = s.handles.removeValue(forKey: id)
                    let info = s.infos.removeValue(forKey: id)
                    if let handle { startUnsubscribe(id, handle: handle, info: info) }
                case .sessionClosed:
                    for (_, t) in s.timers { t.task?.cancel() }
                    s.timers = [:]
                    deferred.append(action)
                default:
                    deferred.append(action)
                }
            }
        }
        for action in deferred { perform(action) }
    }

    /// Unregisters a connection that went away.
    func connectionClosed(_ conn: ConnectionID) {
        run { m, now in m.connectionClosed(conn, now: now) }
        inner.withLockedValue { _ = $0.connections.removeValue(forKey: conn) }
    }

    /// A timer armed on the loop's `KeepaliveWheel` is due (it may have been re-armed or
    /// cancelled since: the generation tells).
    func wheelTimerFired(_ timer: SessionTimer, generation: UInt64) {
        timerFired(timer, generation: generation)
    }

    private func timerFired(_ timer: SessionTimer, generation: UInt64) {
        let current = inner.withLockedValue { s -> Bool in
            guard s.timers[timer]?.generation == generation else { return false }
            s.timers[timer] = nil
            return true
        }
        guard current else { return }
        run { m, now in m.timerFired(timer, now: now) }
    }

    private func startUnsubscribe(_ id: Int, handle: any Sendable, info: TableInfo?) {
        let engine = manager.engine
        manager.metrics.update { $0.subscriptionsActive -= 1 }
        Task {
            await engine.unsubscribeTable(handle)
            if let info { self.notifyTableClosed(info) }
            // The engine sends nothing more for this table: what it sent before goes first, so
            // that no stale event outlives the table (a later add may reuse the id).
            self.run { m, now in m.tableEvents(self.takeInbox(), now: now) + m.unsubscribed(id, now: now) }
        }
    }

    // MARK: - Engine events

    /// An engine event for subscription `id`, from whatever thread the engine delivers on.
    /// Events queue here and reach the machine in batches on the session's event loop: one
    /// lock round, one merged write and one hop per batch instead of per event, and the
    /// engine's thread only pays for the append.
    ///
    /// Batches run on the loop through its `DeliveryPump`, a slice of time at a time, so that
    /// the loop keeps polling its sockets however fast events come. When `inboxLimit` events
    /// wait here (the loop is far behind), the engine's thread handles them itself: memory
    /// stays bounded and the producer slows down instead of queues growing. Before that, MERGE
    /// updates of one item fold into one (`SessionInbox`), so a loop that is behind sends the
    /// latest values and the limit is met only by events that must all be delivered.
    func enqueueTableEvent(_ id: Int, _ event: TableEvent, mergeable: Bool, shared: SharedUpdateEncoding? = nil) {
        if case .overflow(_, let lost) = event { manager.metrics.update { $0.updatesLost += lost } }
        enum Next { case none, schedule, handleHere }
        let next = inbox.withLockedValue { box -> Next in
            box.append(id, event, mergeable: mergeable, shared: shared)
            if box.count >= Self.inboxLimit { return .handleHere }
            if box.drainScheduled { return .none }
            box.drainScheduled = true
            return .schedule
        }
        switch next {
        case .none: break
        case .handleHere: handleInbox()
        case .schedule: pump.add(self)
        }
    }

    static let inboxLimit = 256

    /// How the session is connected right now and what waits for it (the `MONITOR` adapter set).
    func summary(now: Int64) -> SessionSummary {
        let (binding, subscriptions) = inner.withLockedValue { ($0.machine.binding, $0.machine.activeSubscriptionCount) }
        let transport = binding.map { b in
            (b.transport == .webSocket ? "WS" : "HTTP") + (b.polling ? "-POLLING" : "-STREAMING")
        } ?? "UNBOUND"
        let backlog = inbox.withLockedValue { $0.count }
        return SessionSummary(id: id, user: user, address: clientAddress, adapterSet: adapterSet.name, transport: transport,
                              ageMillis: max(0, now - createdAtMillis), backlog: backlog, subscriptions: subscriptions)
    }

    /// Runs the waiting batch (called by the pump, on the session's event loop).
    func drainInbox() {
        run { m, now in
            let (events, conflated) = self.inbox.withLockedValue { box -> ([SessionInbox.Entry], Int) in
                box.drainScheduled = false
                return (box.take(), box.takeConflatedCount())
            }
            if conflated > 0 { self.manager.metrics.update { $0.updatesConflated += conflated } }
            return events.isEmpty ? [] : m.tableEvents(events, now: now)
        }
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
    private func takeInbox() -> [SessionInbox.Entry] {
        inbox.withLockedValue { $0.take() }
    }

    private func perform(_ action: SessionAction) {
        switch action {
        case .subscribe(let id, let parameters):
            subscribe(id, parameters)
        case .reconfigure(let id, let frequency):
            let (handle, info) = inner.withLockedValue { ($0.handles[id], $0.infos[id]) }
            guard let handle else {
                run { m, now in m.reconfigured(id, .failure(SessionRefusal(code: 19, message: "Subscription not found")), now: now) }
                return
            }
            let resolver = self.resolver
            let engine = manager.engine
            Task {
                let clamped = await resolver.clamp(frequency, items: info?.items ?? [])
                let result: Result<GrantedFrequency, SessionRefusal>
                do throws(SessionRefusal) {
                    result = .success(try await engine.setTableFrequency(handle, clamped))
                } catch {
                    result = .failure(error)
                }
                self.run { m, now in m.reconfigured(id, result, now: now) }
            }
        case .handleMessage(let dispatch):
            let metadata = adapterSet.metadata
            Task {
                let result: Result<String?, SessionRefusal>
                do {
                    result = .success(try await metadata.notifyUserMessage(user: self.user, sessionId: self.id, message: dispatch.text))
                } catch {
                    result = .failure(SubscriptionResolver.messageRefusal(error))
                }
                self.run { m, now in m.messageHandled(dispatch.id, result, now: now) }
            }
        case .handleMPN(let dispatch):
            guard let mpn = manager.mpn else {
                run { m, now in m.mpnHandled(dispatch.id, .failure(SessionRefusal(code: 40, message: "MPN Module disabled")), now: now) }
                return
            }
            let context = MPNSessionContext(adapterSet: adapterSet.name, user: user, sessionId: id)
            Task {
                let result = await mpn.handle(dispatch.operation, context: context)
                self.run { m, now in m.mpnHandled(dispatch.id, result, now: now) }
            }
        case .sessionClosed(let reason):
            manager.sessionClosed(self, reason: reason)
        default:
            break
        }
    }

    /// Resolves the add with the Metadata Adapter (which may be remote, so it is awaited), then
    /// subscribes the engine. The machine keeps the subscription `subscribing` all along: a
    /// delete that arrives meanwhile is answered at once and applied when the add completes.
    private func subscribe(_ id: Int, _ parameters: SubscribeParameters) {
        let resolver = self.resolver
        let engine = manager.engine
        Task {
            let resolved: SubscriptionResolver.Resolved
            do throws(SessionRefusal) {
                resolved = try await resolver.resolve(parameters)
            } catch {
                self.logger.debug("subscription refused", metadata: ["subscription": "\(id)", "code": "\(error.code)"])
                self.run { m, now in m.subscribeFailed(id, error, now: now) }
                return
            }
            let sink = SessionTableSink(session: self, subscriptionId: id,
                                        mergeable: resolved.spec.mode == .merge && resolved.spec.maxFrequency != .unfiltered)
            do throws(SessionRefusal) {
                let handle = try await engine.subscribeTable(resolved.spec, sink: sink)
                let granted = engine.grantedTableFrequency(handle)
                self.inner.withLockedValue {
                    $0.handles[id] = handle
                    $0.infos[id] = resolved.info
                }
                self.manager.metrics.update { $0.subscriptionsActive += 1 }
                let spec = resolved.spec
                self.logger.debug("subscribed", metadata: ["subscription": "\(id)", "mode": "\(spec.mode)",
                                                           "items": "\(spec.items.count)", "dataAdapter": "\(resolved.info.dataAdapter)"])
                let grant = SubscriptionGrant(itemCount: spec.items.count, fieldCount: spec.fields.count,
                                              keyPosition: spec.keyPosition, commandPosition: spec.commandPosition,
                                              maxFrequency: granted,
                                              filtered: spec.maxFrequency != .unfiltered)
                self.run { m, now in m.subscribeSucceeded(id, grant: grant, now: now) }
            } catch {
                self.logger.debug("subscription refused by the engine", metadata: ["subscription": "\(id)", "code": "\(error.code)"])
                self.notifyTableClosed(resolved.info)
                self.run { m, now in m.subscribeFailed(id, error, now: now) }
            }
        }
    }

    /// Tells the Metadata Adapter that ruled the table that it closed (the application's one
    /// never sees tables of server-owned data adapters).
    private func notifyTableClosed(_ info: TableInfo) {
        adapterSet.metadata(forDataAdapter: info.dataAdapter).notifyTableClosed(sessionId: id, table: info)
    }

    // MARK: - Views for the manager and tests

    var isClosed: Bool { inner.withLockedValue { $0.machine.isClosed } }
    var boundConnection: ConnectionID? { inner.withLockedValue { $0.machine.boundConnection } }
}

/// Delivers one subscription's engine events to its session.
final class SessionTableSink: SharedEncodingTableSink {
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

    func deliver(_ event: TableEvent, shared: SharedUpdateEncoding?) {
        session.enqueueTableEvent(subscriptionId, event, mergeable: mergeable, shared: shared)
    }
}
