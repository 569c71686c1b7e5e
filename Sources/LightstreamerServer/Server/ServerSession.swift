import Logging
import NIOConcurrencyHelpers
import NIOCore
import TLCP

/// Where a session writes: a WS, an HTTP stream response, or an HTTP control response. Calls
/// never block; they may come from any thread, and are carried out in call order.
public protocol OutboundConnection: AnyObject, Sendable {
    var connectionID: ConnectionID { get }
    var transport: TransportKind { get }
    /// Appends text (whole lines) to the connection.
    func send(_ text: String)
    /// The stream on this connection is over (see `SessionAction.endStream`).
    func endStream(closeSocket: Bool)
    /// The reply to line `index` of an HTTP batch (nil: no line for it).
    func reply(index: Int, line: String?)
}

/// Milliseconds on the monotonic clock NIO schedules with.
func monotonicMillis() -> Int64 { Int64(NIODeadline.now().uptimeNanoseconds / 1_000_000) }

/// Runs one `SessionStateMachine`: feeds it events under a lock, carries out its actions
/// (writes in order, timers on an event loop, engine and adapter calls as tasks).
final class ServerSession: Sendable {
    let id: String
    let user: String?
    let adapterSet: AdapterSet
    let eventLoop: any EventLoop
    let manager: SessionManager

    private struct Inner {
        var machine: SessionStateMachine
        var connections: [ConnectionID: any OutboundConnection] = [:]
        /// Replies this session still owes to HTTP batch responses (dropped from `connections` at 0).
        var pendingReplies: [ConnectionID: Int] = [:]
        var handles: [Int: any Sendable] = [:]
        var infos: [Int: TableInfo] = [:]
        var timers: [SessionTimer: (generation: UInt64, task: Scheduled<Void>)] = [:]
        var timerGeneration: UInt64 = 0
    }

    private let inner: NIOLockedValueBox<Inner>

    init(id: String, user: String?, adapterSet: AdapterSet, eventLoop: any EventLoop, manager: SessionManager,
         machine: SessionStateMachine) {
        self.id = id
        self.user = user
        self.adapterSet = adapterSet
        self.eventLoop = eventLoop
        self.manager = manager
        self.inner = NIOLockedValueBox(Inner(machine: machine))
    }

    var resolver: SubscriptionResolver { SubscriptionResolver(adapterSet: adapterSet, user: user, sessionId: id) }

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
            for action in actions {
                switch action {
                case .write(let conn, let text, let updates):
                    guard let c = s.connections[conn] else { continue }
                    c.send(text)
                    manager.metrics.sent(bytes: text.utf8.count, updates: updates)
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
                    s.timers[timer]?.task.cancel()
                    s.timerGeneration += 1
                    let generation = s.timerGeneration
                    let deadline = NIODeadline.uptimeNanoseconds(UInt64(max(at, 0)) * 1_000_000)
                    let task = eventLoop.scheduleTask(deadline: deadline) { [self] in
                        self.timerFired(timer, generation: generation)
                    }
                    s.timers[timer] = (generation, task)
                case .cancelTimer(let timer):
                    s.timers.removeValue(forKey: timer)?.task.cancel()
                case .unsubscribe(let id):
                    let handle = s.handles.removeValue(forKey: id)
                    let info = s.infos.removeValue(forKey: id)
                    if let handle { startUnsubscribe(id, handle: handle, info: info) }
                case .sessionClosed:
                    for (_, t) in s.timers { t.task.cancel() }
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
            self.run { m, now in m.unsubscribed(id, now: now) }
        }
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
            let clamped = resolver.clamp(frequency, items: info?.items ?? [])
            let engine = manager.engine
            Task {
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

    private func subscribe(_ id: Int, _ parameters: SubscribeParameters) {
        let resolved: SubscriptionResolver.Resolved
        do {
            resolved = try resolver.resolve(parameters)
        } catch {
            run { m, now in m.subscribeFailed(id, error, now: now) }
            return
        }
        let engine = manager.engine
        let sink = SessionTableSink(session: self, subscriptionId: id)
        Task {
            do throws(SessionRefusal) {
                let handle = try await engine.subscribeTable(resolved.spec, sink: sink)
                let granted = engine.grantedTableFrequency(handle)
                self.inner.withLockedValue {
                    $0.handles[id] = handle
                    $0.infos[id] = resolved.info
                }
                self.manager.metrics.update { $0.subscriptionsActive += 1 }
                let spec = resolved.spec
                let grant = SubscriptionGrant(itemCount: spec.items.count, fieldCount: spec.fields.count,
                                              keyPosition: spec.keyPosition, commandPosition: spec.commandPosition,
                                              maxFrequency: granted,
                                              filtered: spec.maxFrequency != .unfiltered)
                self.run { m, now in m.subscribeSucceeded(id, grant: grant, now: now) }
            } catch {
                self.notifyTableClosed(resolved.info)
                self.run { m, now in m.subscribeFailed(id, error, now: now) }
            }
        }
    }

    /// Tells the Metadata Adapter a table closed (not for tables of server-owned data adapters,
    /// which it never saw opening).
    private func notifyTableClosed(_ info: TableInfo) {
        guard !adapterSet.serverOwnedDataAdapters.contains(info.dataAdapter) else { return }
        adapterSet.metadata.notifyTableClosed(sessionId: id, table: info)
    }

    // MARK: - Views for the manager and tests

    var isClosed: Bool { inner.withLockedValue { $0.machine.isClosed } }
    var boundConnection: ConnectionID? { inner.withLockedValue { $0.machine.boundConnection } }
}

/// Delivers one subscription's engine events to its session.
final class SessionTableSink: TableSink {
    let session: ServerSession
    let subscriptionId: Int

    init(session: ServerSession, subscriptionId: Int) {
        self.session = session
        self.subscriptionId = subscriptionId
    }

    func deliver(_ event: TableEvent) {
        let id = subscriptionId
        session.run { m, now in m.tableEvent(id, event, now: now) }
    }
}
