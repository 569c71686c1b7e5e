import NIOCore
import TLCP

/// The action runner: feeds an event to the machine and carries out the actions it returns.
///
/// It works in two parts. Under the session's lock go the actions whose order matters against
/// other events of the same session: writes (each connection gets its lines in the machine's
/// order), timers (arming and cancelling them must not race with the next event), and the
/// bookkeeping of engine handles. Everything that calls out of the session (the engine, the
/// adapters, the MPN Module, the manager) is listed as `DeferredWork` and runs after the lock
/// is released, so none of it can call back into a locked session.
extension ServerSession {
    /// Work an event leaves for after the lock.
    enum DeferredWork {
        /// Resolve an add with the Metadata Adapter and subscribe it in the engine.
        case subscribe(subscriptionId: Int, SubscribeParameters)
        /// Unsubscribe a table the engine holds.
        case unsubscribe(subscriptionId: Int, handle: TableHandle, info: TableInfo?)
        /// Change the frequency of a table (no handle: the engine holds none for it).
        case reconfigure(subscriptionId: Int, RequestedFrequency, handle: TableHandle?, info: TableInfo?)
        /// Hand a message to the Metadata Adapter.
        case handleMessage(MessageDispatch)
        /// Hand an MPN operation to the MPN Module.
        case handleMPN(MPNDispatch)
        /// Drop the session from the manager.
        case sessionClosed(SessionStateMachine.CloseReason)
    }

    /// Feeds one event. `connection` is registered first so the machine's actions can reach it.
    func run(
        registering connection: (any OutboundConnection)? = nil, expectingReply: Bool = false,
        _ event: (inout SessionStateMachine, Int64) -> [SessionStateMachine.Action]
    ) {
        runActions(registering: connection, expectingReply: expectingReply, event)
    }

    /// `run` for an event whose actions come as an `ActionList` (a run of table events).
    func run(_ event: (inout SessionStateMachine, Int64) -> SessionStateMachine.ActionList) {
        runActions(registering: nil, expectingReply: false, event)
    }

    private func runActions<Actions: RandomAccessCollection<SessionStateMachine.Action>>(
        registering connection: (any OutboundConnection)?, expectingReply: Bool,
        _ event: (inout SessionStateMachine, Int64) -> Actions
    ) where Actions.Index == Int {
        let (deferred, folded) = inner.withLock { s -> ([DeferredWork], Int) in
            if let connection {
                s.connections[connection.connectionID] = connection
                if expectingReply { s.pendingReplies[connection.connectionID, default: 0] += 1 }
            }
            let actions = event(&s.machine, monotonicMillis())
            return (applyLocked(actions, to: &s), s.machine.takeFoldedCount())
        }
        if folded > 0 { manager.metrics.update { $0.updatesConflated += folded } }
        for work in deferred { perform(work) }
    }

    /// Carries out, in order, the actions that belong under the lock, and returns the others as
    /// deferred work (in the order the machine gave them).
    private func applyLocked<Actions: RandomAccessCollection<SessionStateMachine.Action>>(
        _ actions: Actions, to s: inout Inner
    ) -> [DeferredWork] where Actions.Index == Int {
        var deferred: [DeferredWork] = []
        var i = 0
        while i < actions.count {
            let action = actions[i]
            i += 1
            switch action {
            case .write(let conn, let text, let updates):
                guard let c = s.connections[conn] else { continue }
                manager.metrics.sent(bytes: text.utf8.count, updates: updates)
                if i < actions.count, case .endStream(conn, let closeSocket) = actions[i] {
                    // The last lines of a stream (LOOP, END) and its end travel together.
                    i += 1
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
                // Recording the new arming cancels the previous one (`SessionTimers`).
                let generation = s.timers.nextGeneration()
                // The timers every bound stream keeps armed (a PROBE's, and SYNC's unless the
                // client turned it off) go on the loop's wheel: no scheduled task of their own
                // per session, about 150 bytes each. The wheel refuses the others.
                if keepaliveWheel.arm(self, timer, generation: generation, atMillis: at, now: monotonicMillis()) {
                    s.timers.armedOnWheel(timer, generation: generation)
                    continue
                }
                let deadline = NIODeadline.uptimeNanoseconds(Saturating.uptimeNanoseconds(millis: at))
                let task = eventLoop.scheduleTask(deadline: deadline) { [self] in
                    self.timerFired(timer, generation: generation)
                }
                s.timers.armed(timer, generation: generation, task: task)
            case .cancelTimer(let timer):
                s.timers.cancel(timer)
            case .subscribe(let id, let parameters):
                deferred.append(.subscribe(subscriptionId: id, parameters))
            case .unsubscribe(let id):
                let handle = s.handles.removeValue(forKey: id)
                let info = s.infos.removeValue(forKey: id)
                if let handle { deferred.append(.unsubscribe(subscriptionId: id, handle: handle, info: info)) }
            case .reconfigure(let id, let frequency):
                deferred.append(.reconfigure(subscriptionId: id, frequency, handle: s.handles[id], info: s.infos[id]))
            case .handleMessage(let dispatch):
                deferred.append(.handleMessage(dispatch))
            case .handleMPN(let dispatch):
                deferred.append(.handleMPN(dispatch))
            case .sessionClosed(let reason):
                s.timers.cancelAll()
                deferred.append(.sessionClosed(reason))
            }
        }
        return deferred
    }

    /// Runs one piece of deferred work (the session is not locked).
    private func perform(_ work: DeferredWork) {
        switch work {
        case .subscribe(let id, let parameters):
            subscribe(id, parameters)
        case .unsubscribe(let id, let handle, let info):
            startUnsubscribe(id, handle: handle, info: info)
        case .reconfigure(let id, let frequency, let handle, let info):
            guard let handle else {
                run { m, now in m.reconfigured(id, .failure(SessionRefusal(code: 19, message: "Subscription not found")), now: now) }
                return
            }
            reconfigure(id, frequency, handle: handle, info: info)
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
        }
    }

    /// Unregisters a connection that went away.
    func connectionClosed(_ conn: ConnectionID) {
        run { m, now in m.connectionClosed(conn, now: now) }
        inner.withLock { _ = $0.connections.removeValue(forKey: conn) }
    }

    /// A timer armed on the loop's `KeepaliveWheel` is due (it may have been re-armed or
    /// cancelled since: the generation tells).
    func wheelTimerFired(_ timer: SessionStateMachine.Timer, generation: UInt64) {
        timerFired(timer, generation: generation)
    }

    private func timerFired(_ timer: SessionStateMachine.Timer, generation: UInt64) {
        let current = inner.withLock { s -> Bool in
            s.timers.fire(timer, generation: generation)
        }
        guard current else { return }
        run { m, now in m.timerFired(timer, now: now) }
    }

    // MARK: - Tables in the engine

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
                self.log(.debug, "subscription refused", metadata: ["subscription": "\(id)", "code": "\(error.code)"])
                self.run { m, now in m.subscribeFailed(id, error, now: now) }
                return
            }
            let sink = SessionTableSink(
                session: self, subscriptionId: id,
                mergeable: resolved.spec.mode == .merge && resolved.spec.maxFrequency != .unfiltered)
            do throws(ItemEngineError) {
                let handle = try await engine.subscribe(resolved.spec, sink: sink)
                let granted = engine.grantedFrequency(of: handle)
                self.inner.withLock {
                    $0.handles[id] = handle
                    $0.infos[id] = resolved.info
                }
                self.manager.metrics.update { $0.subscriptionsActive += 1 }
                let spec = resolved.spec
                self.log(
                    .debug, "subscribed",
                    metadata: [
                        "subscription": "\(id)", "mode": "\(spec.mode)",
                        "items": "\(spec.items.count)", "dataAdapter": "\(resolved.info.dataAdapter)",
                    ])
                let grant = SubscriptionGrant(
                    itemCount: spec.items.count, fieldCount: spec.fields.count,
                    keyPosition: spec.keyPosition, commandPosition: spec.commandPosition,
                    maxFrequency: granted,
                    filtered: spec.maxFrequency != .unfiltered)
                self.run { m, now in m.subscribeSucceeded(id, grant: grant, now: now) }
            } catch {
                self.log(.debug, "subscription refused by the engine", metadata: ["subscription": "\(id)", "code": "\(error.code)"])
                self.notifyTableClosed(resolved.info)
                let refusal = SessionRefusal(error)
                self.run { m, now in m.subscribeFailed(id, refusal, now: now) }
            }
        }
    }

    /// Clamps the requested frequency to what the items allow, then changes it in the engine.
    private func reconfigure(_ id: Int, _ frequency: RequestedFrequency, handle: TableHandle, info: TableInfo?) {
        let resolver = self.resolver
        let engine = manager.engine
        Task {
            let clamped = await resolver.clamp(frequency, items: info?.items ?? [])
            let result: Result<GrantedFrequency, SessionRefusal>
            do throws(ItemEngineError) {
                try await engine.setMaxFrequency(handle, clamped)
                result = .success(engine.grantedFrequency(of: handle))
            } catch {
                result = .failure(SessionRefusal(error))
            }
            self.run { m, now in m.reconfigured(id, result, now: now) }
        }
    }

    private func startUnsubscribe(_ id: Int, handle: TableHandle, info: TableInfo?) {
        let engine = manager.engine
        manager.metrics.update { $0.subscriptionsActive -= 1 }
        Task {
            await engine.unsubscribe(handle)
            if let info { self.notifyTableClosed(info) }
            // The engine sends nothing more for this table: what it sent before goes first, so
            // that no stale event outlives the table (a later add may reuse the id).
            self.run { m, now in m.tableEvents(self.takeInbox(), now: now) + m.unsubscribed(id, now: now) }
        }
    }

    /// Tells the Metadata Adapter that ruled the table that it closed (the application's one
    /// never sees tables of server-owned data adapters).
    private func notifyTableClosed(_ info: TableInfo) {
        adapterSet.metadata(forDataAdapter: info.dataAdapter).notifyTableClosed(sessionId: id, table: info)
    }
}

extension SessionRefusal {
    /// The engine's refusal, with its code and message, as the session reports it.
    init(_ error: ItemEngineError) {
        self.init(code: error.code, message: error.message)
    }
}
