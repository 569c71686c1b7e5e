import TLCP

/// Control requests (docs/protocol/TLCP.md §2.3) and the subscription events they lead to.
extension SessionStateMachine {
    /// A `control` request for this session.
    public mutating func control(_ request: ControlRequest, origin: RequestOrigin, now: Int64) -> [Action] {
        lastClientActivity = now
        guard isActive else {
            replyError(origin, request.requestId, SessionRefusal(code: 20, message: "Session not found"), now: now)
            return output.take()
        }
        let ack = request.ack == false && version.supports(.ackSuppression) ? false : true
        let reqId = request.requestId
        switch request.operation {
        case .add(let p):
            if let existing = tables[p.subscriptionId], existing.parameters == p, !existing.deleteRequested,
                existing.isLive
            {
                // The same add again: a client that resent a control whose answer it did not
                // get in time (official clients do, over HTTP). The first one stands.
                replyOK(origin, reqId, ack: ack, now: now)
                break
            }
            guard tables[p.subscriptionId] == nil else {
                replyError(origin, reqId, SessionRefusal(code: 65, message: "Subscription id \(p.subscriptionId) in use"), now: now)
                break
            }
            guard tables.count < settings.maxSubscriptionsPerSession else {
                replyError(
                    origin, reqId,
                    SessionRefusal(
                        code: 30, message: "Too many subscriptions in this session (at most \(settings.maxSubscriptionsPerSession))"),
                    now: now)
                break
            }
            tables[p.subscriptionId] = SessionTable(parameters: p, origin: origin, requestId: reqId, ack: ack)
            output.actions.append(.subscribe(subscriptionId: p.subscriptionId, p))

        case .delete(let id):
            guard var t = tables[id] else {
                replyError(origin, reqId, SessionRefusal(code: 19, message: "Subscription \(id) not found"), now: now)
                break
            }
            switch t.state {
            case .subscribing:
                t.deleteRequested = true
                tables[id] = t
                replyOK(origin, reqId, ack: ack, now: now)
            case .active:
                t.state = .unsubscribing
                tables[id] = t
                replyOK(origin, reqId, ack: ack, now: now)
                output.actions.append(.unsubscribe(subscriptionId: id))
            case .unsubscribing:
                replyError(origin, reqId, SessionRefusal(code: 19, message: "Subscription \(id) already deleted"), now: now)
            }

        case .reconf(let id, let frequency):
            guard var t = tables[id], case .active = t.state else {
                replyError(origin, reqId, SessionRefusal(code: 19, message: "Subscription \(id) not found"), now: now)
                break
            }
            if t.parameters.maxFrequency == .unfiltered {
                replyError(origin, reqId, SessionRefusal(code: 13, message: "Subscription \(id) is unfiltered"), now: now)
                break
            }
            guard let frequency, t.pendingReconf == nil else {
                replyOK(origin, reqId, ack: true, now: now)
                break
            }
            if frequency == .unfiltered {
                replyError(origin, reqId, SessionRefusal(code: 65, message: "A subscription cannot become unfiltered"), now: now)
                break
            }
            t.pendingReconf = (origin, reqId, true)
            tables[id] = t
            output.actions.append(.reconfigure(subscriptionId: id, frequency))

        case .constrain(let bandwidth):
            requestedBandwidth = bandwidth ?? .unlimited
            limiter.setLimit(kbps: grantedBandwidthKbps, now: now)
            replyOK(origin, reqId, ack: true, now: now)
            if !reduceHeadSession { writeStream(.cons(grantedBandwidth), now: now) }
            flushData(now: now)

        case .forceRebind(let pollingMillis, let closeSocket):
            replyOK(origin, reqId, ack: true, now: now)
            if let b = binding {
                let delay = min(pollingMillis ?? 0, settings.maxPollingMillis)
                writeStream(.loop(delayMillis: delay), now: now)
                output.actions.append(.endStream(b.connection, closeSocket: closeSocket == true))
                unbind(clean: true, now: now)
            }

        case .destroy(let code, let message, let closeSocket):
            let (endCode, endMessage) = destroyCause(code: code, message: message)
            replyOK(origin, reqId, ack: true, now: now)
            let end = TLCPNotification.end(code: endCode, message: endMessage).encoded(version: version)
            if let b = binding {
                write(end, to: b.connection, now: now)
                output.actions.append(.endStream(b.connection, closeSocket: b.transport == .http || closeSocket == true))
                unbind(clean: true, now: now, armTimeout: false)
            } else if case .webSocket(let conn) = origin {
                write(end, to: conn, now: now)
                if closeSocket == true { output.actions.append(.endStream(conn, closeSocket: true)) }
            }
            close(reason: .destroyed(code: endCode, message: endMessage), now: now)

        case .mpnRegister, .mpnResetBadge, .mpnActivate, .mpnReconf, .mpnDeactivate:
            guard settings.mpnEnabled else {
                replyError(origin, reqId, SessionRefusal(code: 40, message: "MPN Module disabled"), now: now)
                break
            }
            enqueueMPN(request.operation, origin: origin, requestId: reqId, now: now)
        }
        return output.take()
    }

    /// The END code and message of a `destroy` (docs/protocol/TLCP.md §2.3): positive codes
    /// become 0; a code without message gives `null`; a message must be short plain ASCII on
    /// one line.
    func destroyCause(code: Int?, message: String?) -> (Int, String) {
        guard let code else { return (31, "Destroyed by the client") }
        let endCode = code > 0 ? 0 : code
        guard let message else { return (endCode, "null") }
        let plain = message.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        let tooLongForBudget = message.utf8.count > 35 && binding?.contentLength != nil
        if !plain || tooLongForBudget { return (endCode, "[Custom message skipped]") }
        return (endCode, message)
    }

    // MARK: - Replies

    mutating func replyOK(_ origin: RequestOrigin, _ requestId: String?, ack: Bool, now: Int64) {
        let line = TLCPNotification.reqok(requestId: requestId).encoded(version: version)
        switch origin {
        case .webSocket(let conn):
            if ack { write(line, to: conn, now: now) }
        case .http(let conn, let index):
            output.actions.append(.httpReply(conn, index: index, line: line))
        case .combo:
            break
        }
    }

    mutating func replyError(_ origin: RequestOrigin, _ requestId: String?, _ refusal: SessionRefusal, now: Int64) {
        let n: TLCPNotification =
            requestId.map { .reqerr(requestId: $0, code: refusal.code, message: refusal.message) }
            ?? .error(code: refusal.code, message: refusal.message)
        let line = n.encoded(version: version)
        switch origin {
        case .webSocket(let conn):
            write(line, to: conn, now: now)
        case .http(let conn, let index):
            output.actions.append(.httpReply(conn, index: index, line: line))
        case .combo:
            modifyPendingCreate { pending in
                if pending.failure == nil { pending.failure = refusal }
            }
        }
    }

    // MARK: - Engine answers

    /// The engine and Metadata Adapter accepted subscription `id` with `grant`; returns what to do.
    public mutating func subscribeSucceeded(_ id: Int, grant: SubscriptionGrant, now: Int64) -> [Action] {
        guard !isClosed else {
            output.actions.append(.unsubscribe(subscriptionId: id))
            if let t = tables.removeValue(forKey: id), case .subscribing = t.state {
                replyError(t.origin, t.requestId, SessionRefusal(code: 20, message: "Session closed"), now: now)
            }
            return output.take()
        }
        guard var t = tables[id], case .subscribing = t.state else { return output.take() }
        t.grant = grant
        t.rows = Array(repeating: nil, count: grant.itemCount)
        t.state = .active
        let early = t.early
        t.early = []
        tables[id] = t
        replyOK(t.origin, t.requestId, ack: t.ack, now: now)
        if t.parameters.mode == .command, let key = grant.keyPosition, let command = grant.commandPosition {
            emitData(
                .subcmd(
                    subscriptionId: id, itemCount: grant.itemCount, fieldCount: grant.fieldCount,
                    keyPosition: key, commandPosition: command), now: now)
        } else {
            emitData(.subok(subscriptionId: id, itemCount: grant.itemCount, fieldCount: grant.fieldCount), now: now)
        }
        emitData(.conf(subscriptionId: id, maxFrequency: grant.maxFrequency, filtered: grant.filtered), now: now)
        for event in early { deliver(id, event, now: now) }
        if t.deleteRequested, var t2 = tables[id] {
            t2.state = .unsubscribing
            tables[id] = t2
            output.actions.append(.unsubscribe(subscriptionId: id))
        }
        if case .combo = t.origin { comboPartDone(now: now) }
        return output.take()
    }

    /// Subscription `id` was refused with `refusal`; returns what to do.
    public mutating func subscribeFailed(_ id: Int, _ refusal: SessionRefusal, now: Int64) -> [Action] {
        guard let t = tables[id], case .subscribing = t.state else { return output.take() }
        tables[id] = nil
        replyError(t.origin, t.requestId, refusal, now: now)
        if case .combo = t.origin { comboPartDone(now: now) }
        return output.take()
    }

    mutating func comboPartDone(now: Int64) {
        guard pendingCreate != nil else { return }
        modifyPendingCreate { $0.outstanding -= 1 }
        completeCreateIfReady(now: now)
    }

    /// The engine confirmed a delete: no more events will come.
    public mutating func unsubscribed(_ id: Int, now: Int64) -> [Action] {
        guard !isClosed, tables[id] != nil else { return output.take() }
        tables[id] = nil
        emitData(.unsub(subscriptionId: id), now: now)
        return output.take()
    }

    /// The outcome of a frequency change of subscription `id`; returns what to do.
    public mutating func reconfigured(_ id: Int, _ result: Result<GrantedFrequency, SessionRefusal>, now: Int64) -> [Action] {
        guard var t = tables[id], let pending = t.pendingReconf else { return output.take() }
        t.pendingReconf = nil
        tables[id] = t
        if isClosed {
            replyError(pending.origin, pending.requestId, SessionRefusal(code: 20, message: "Session closed"), now: now)
            return output.take()
        }
        switch result {
        case .success(let granted):
            t.grant?.maxFrequency = granted
            tables[id] = t
            replyOK(pending.origin, pending.requestId, ack: pending.ack, now: now)
            emitData(.conf(subscriptionId: id, maxFrequency: granted, filtered: t.grant?.filtered ?? true), now: now)
        case .failure(let refusal):
            replyError(pending.origin, pending.requestId, refusal, now: now)
        }
        return output.take()
    }

    /// An event of subscription `id` from the item engine.
    public mutating func tableEvent(_ id: Int, _ event: TableEvent, now: Int64) -> [Action] {
        handleTableEvent(id, event, now: now)
        return output.take()
    }

    /// `tableEvent` without taking the output (a batch takes it once).
    mutating func handleTableEvent(
        _ id: Int, _ event: consuming TableEvent, shared: consuming SharedUpdateEncoding? = nil, now: Int64
    ) {
        // One lookup of the table per event (the early check and the delivery share it).
        guard !isClosed, let index = tables.index(forKey: id) else { return }
        handleTableEvent(at: index, id, event, shared: shared, now: now)
    }

    /// `handleTableEvent` for the table at `index` in `tables`, found by the caller (valid
    /// while no table is added or removed; nothing an event does adds or removes one).
    mutating func handleTableEvent(
        at index: Dictionary<Int, SessionTable>.Index, _ id: Int, _ event: consuming TableEvent,
        shared: consuming SharedUpdateEncoding?, now: Int64
    ) {
        if withTable(at: index, { $0.isSubscribing }) {
            tables.values[index].early.append(event)
            return
        }
        if isUnbound {
            // No stream: MERGE updates fold, and other events of an item come after its held row.
            switch event {
            case .update(let item, let values, let isSnapshot):
                if holdOrRelease(at: index, id, item: item, values: values, isSnapshot: isSnapshot, now: now) { return }
            case .endOfSnapshot(let item), .clearSnapshot(let item), .overflow(let item, _):
                releaseHeld(at: index, id, item: item, now: now)
            }
        }
        deliver(at: index, id, event, shared: shared, now: now)
    }

    /// `handleTableEvent(at:…)` for an update whose row is `encoding.values`
    /// (`EngineEvent.shared`): the row is read from the encoding, which holds it for every
    /// session, rather than carried beside it. It repeats the shared branch of
    /// `deliver(at:…)` rather than calling a helper that takes the row: passing the row cost
    /// a retain and a release per update (2,238 against 2,290 instructions per update,
    /// Benchmarks/server-callgrind.sh).
    mutating func handleSharedUpdate(
        at index: Dictionary<Int, SessionTable>.Index, _ id: Int, item: Int, isSnapshot: Bool,
        _ encoding: consuming SharedUpdateEncoding, now: Int64
    ) {
        // The table is read in place (`withTable`): `tables.values[index].state` copied the
        // whole table first where this function was not inlined, some 300 instructions per
        // update (Benchmarks/server-callgrind.sh).
        // Without a stream, MERGE rows fold. A subscription still waiting for its `SUBOK` has no
        // grant, so nothing is held for it and its event waits below, as with a stream.
        if isUnbound, holdOrRelease(at: index, id, item: item, values: encoding.values, isSnapshot: isSnapshot, now: now) {
            return
        }
        // The table is reached once: each access through `tables.values` checks that the
        // dictionary's storage is unique, and so on: about 20 instructions per update
        // (BENCHMARKS.md, "The WebSocket's handler is its write queue; one table access per
        // shared update").
        let diffMask = self.diffMask
        // Moved into the row when it is shared (`SentRow`), without a retain.
        var moving: SharedUpdateEncoding? = consume encoding
        let outcome = withTable(at: index) { t -> SharedUpdateOutcome in
            guard let encoding = moving.take() else { return .kept }
            if t.isSubscribing {
                t.early.append(.update(item: item, values: encoding.values, isSnapshot: isSnapshot))
                return .kept
            }
            guard let grant = t.grant, item >= 1, item <= grant.itemCount, encoding.values.count == grant.fieldCount,
                encoding.applies(previous: t.rows[item - 1]),
                let encoded = encoding.encodedBytes(mask: diffMask)
            else {
                moving = consume encoding
                return .encodeHere
            }
            t.rows[item - 1] = .shared(consume encoding)
            return .shared(encoded)
        }
        switch outcome {
        case .kept:
            return
        case .shared(let encoded):
            // The bytes are the encoding's, which the row now holds: `emitLine` copies them
            // into the log before anything it does could change the session's tables.
            emitLine(.update(subscriptionId: id, item: item, encoded: encoded), isUpdate: true, now: now)
        case .encodeHere:
            guard let encoding = moving.take() else { return }
            deliver(at: index, id, .update(item: item, values: encoding.values, isSnapshot: isSnapshot), shared: nil, now: now)
        }
    }

    mutating func deliver(_ id: Int, _ event: TableEvent, shared: SharedUpdateEncoding? = nil, now: Int64) {
        guard let index = tables.index(forKey: id) else { return }
        deliver(at: index, id, event, shared: shared, now: now)
    }

    /// `deliver` for the table at `index` in `tables` (which holds until `tables` changes:
    /// nothing below touches another table before the line is made).
    mutating func deliver(
        at index: Dictionary<Int, SessionTable>.Index, _ id: Int, _ event: consuming TableEvent,
        shared: consuming SharedUpdateEncoding?, now: Int64
    ) {
        let diffMask = self.diffMask
        if case .update(let item, let values, _) = event, let shared {
            // The common case: the bytes other sessions already encoded for this update.
            let encoded = withTable(at: index) { t -> UnsafeBufferPointer<UInt8>? in
                guard let grant = t.grant, item >= 1, item <= grant.itemCount, values.count == grant.fieldCount,
                    shared.applies(previous: t.rows[item - 1], values: values),
                    let encoded = shared.encodedBytes(mask: diffMask)
                else { return nil }
                t.rows[item - 1] = .values(values)
                return encoded
            }
            if let encoded {
                withExtendedLifetime(shared) {
                    emitLine(.update(subscriptionId: id, item: item, encoded: encoded), isUpdate: true, now: now)
                }
                return
            }
        }
        let diffs = self.diffs
        let notification = withTable(at: index) { t -> TLCPNotification? in
            guard let grant = t.grant else { return nil }
            switch event {
            case .update(let item, let values, _):
                guard item >= 1, item <= grant.itemCount, values.count == grant.fieldCount else { return nil }
                let tokens = UpdateCodec.encode(previous: t.rows[item - 1]?.values, current: values, diffs: diffs)
                t.rows[item - 1] = .values(values)
                return .update(UpdateNotification(subscriptionId: id, item: item, values: tokens))
            case .endOfSnapshot(let item):
                guard item >= 1, item <= grant.itemCount else { return nil }
                return .endOfSnapshot(subscriptionId: id, item: item)
            case .clearSnapshot(let item):
                guard item >= 1, item <= grant.itemCount else { return nil }
                t.rows[item - 1] = nil
                return .clearSnapshot(subscriptionId: id, item: item)
            case .overflow(let item, let lost):
                guard item >= 1, item <= grant.itemCount, lost > 0 else { return nil }
                return .overflow(subscriptionId: id, item: item, lostCount: lost)
            }
        }
        if let notification { emitData(notification, now: now) }
    }
}

/// What `handleSharedUpdate` found in the table: the event kept until the `SUBOK`, the bytes
/// the update shares with other sessions, or a line to encode for this session alone.
private enum SharedUpdateOutcome {
    case kept
    case shared(UnsafeBufferPointer<UInt8>)
    case encodeHere
}
