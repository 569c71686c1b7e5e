import Logging
import NIOCore
import NIOWebSocket
import TLCP

/// TLCP over one WebSocket (docs/protocol/TLCP.md §1.3): one request per text message, `wsok`, at
/// most one stream at a time (69), controls without `LS_session` meaning the last session bound
/// here, and controls that follow a create or bind waiting for its outcome.
///
/// The handler is also the WebSocket's write queue as its sessions see it (`OutboundQueue`,
/// drained by `drain(_:)`): a queue of its own, with a closure calling back into the handler,
/// cost every idle WebSocket two allocations, some 140 bytes (BENCHMARKS.md, "The WebSocket's
/// handler is its write queue; one table access per shared update"). Everything below but the
/// queue's locked state is the event loop's: only the loop reads or changes it.
final class WebSocketTLCPHandler: OutboundQueue, ChannelInboundHandler, @unchecked Sendable {
    /// The connection's bytes: the pipeline has no frame decoder (`WebSocketFrameParser`).
    typealias InboundIn = ByteBuffer
    /// Whole frames, encoded here (`WebSocketServerFrame`): the pipeline has no frame encoder.
    typealias OutboundOut = ByteBuffer

    enum StreamState {
        case none
        /// A create or bind is being handled.
        case pending
        case bound(String)
    }

    let manager: SessionManager
    let version: TLCPVersion
    /// What this connection took of the server-wide `BacklogBudget` while unwritable. Right
    /// after `version` (12 bytes), in the 4 bytes before the next 8-byte field: the fields'
    /// order is the instance's layout, kept at 320 bytes, an allocator size class (BENCHMARKS.md,
    /// "An idle session's objects in smaller size classes"). Unchecked: only the event loop
    /// touches it, and `BacklogGuard.refusal`, which takes it `inout`, calls nothing that could;
    /// checked, every write began a dynamic exclusivity access to it.
    @exclusivity(unchecked) private var budgetShare = BacklogBudgetShare()
    let clientIP: String?
    let headers: UpgradeHeaders
    /// The manager's logger (the one the front was given), read when a line is logged rather
    /// than kept in every WebSocket's handler.
    var logger: Logger { manager.logger }
    /// The handler's context while the connection is open (`handlerAdded` to `channelInactive`
    /// or `handlerRemoved`): the queue's drain writes through it. Let go at the end, for the
    /// context holds the handler.
    private var context: ChannelHandlerContext?
    private var stream: StreamState = .none
    private var lastSession: String?
    /// Requests without `LS_session` that arrived while a create or bind was pending.
    private var waiting: [TLCPRequest] = []
    /// The client's bytes cut into frames.
    private var parser: WebSocketFrameParser
    /// RFC 6455's rules on the client's frames: fragments joined, violations found.
    private var inbound: WebSocketInbound
    private var closing = false
    /// The channel's writability, as its events tell it (`channelWritabilityChanged`, and
    /// when the handler is added): a write reads it here rather than through
    /// `context.channel`, which retained and released the channel and loaded atomics of
    /// objects of their own (`isActive`, `isWritable`), cold in the cache for every session's
    /// write (BENCHMARKS.md, "The write path without the channel's getters"). Whether the
    /// channel is still active is `context` (let go at `channelInactive`) and `closing`.
    /// Declared beside `closing`, so that it takes a byte of the padding there rather than
    /// eight more bytes of every handler.
    private var writable = true
    /// Whether the session last bound here was told that this socket is full
    /// (`ServerSession.outputBlocked`); it is told again when the socket drains, when its
    /// stream here ends, or when the connection goes. Beside `writable`, in the same padding.
    private var toldBlocked = false
    /// Told of every text frame written: when a session is bound here and when not. Unchecked:
    /// only the event loop touches it, and `textWritten` calls nothing that could; checked, each
    /// write began and ended a dynamic exclusivity access to it.
    @exclusivity(unchecked) private var sessionObserver = WebSocketSessionObserver()
    /// How long the WebSocket may go without a session bound on it, after the upgrade and
    /// after each session's `END` or `LOOP`, in milliseconds (`UInt32.max`: no limit; longer
    /// limits are clamped to 49 days). `ConnectionTimeoutHandler` runs the connection's
    /// timeouts up to the upgrade and leaves the pipeline then: one handler and its context
    /// fewer for every WebSocket (BENCHMARKS.md "Session bookkeeping without allocations").
    /// 32 bits, like the timer's generation, so that both fit beside the flags above.
    private let sessionTimeoutMillis: UInt32
    private var sessionTimerGeneration: UInt32 = 0
    private var sessionTimer: Scheduled<Void>?
    /// The allocator of the server's channels: none sets another than NIO's default (kept
    /// once here rather than in every handler: 32 bytes of function pointers).
    private static let allocator = ByteBufferAllocator()
    private var drainWatch = DrainWatch()

    /// `maxMessageBytes`: the most a frame, or a message over its fragments, may carry (close
    /// 1009 beyond).
    init(
        manager: SessionManager, version: TLCPVersion, clientIP: String?, headers: UpgradeHeaders,
        maxMessageBytes: Int, sessionTimeoutMillis: Int? = nil, eventLoop: any EventLoop
    ) {
        self.sessionTimeoutMillis = sessionTimeoutMillis.map { min(UInt32(clamping: $0), .max - 1) } ?? .max
        self.parser = WebSocketFrameParser(maxFrameBytes: maxMessageBytes)
        self.inbound = WebSocketInbound(maxMessageBytes: maxMessageBytes)
        self.manager = manager
        self.version = version
        self.clientIP = clientIP
        self.headers = headers
        super.init(connectionID: ConnectionIDs.next(), transport: .webSocket, eventLoop: eventLoop)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        writable = context.channel.isWritable
        manager.metrics.update { $0.connectionsOpen += 1 }
        armSessionTimer(context: context)
    }

    /// (Re)starts the wait for a session on this WebSocket.
    private func armSessionTimer(context: ChannelHandlerContext) {
        guard sessionTimeoutMillis != .max else { return }
        let millis = Int(sessionTimeoutMillis)
        sessionTimer?.cancel()
        sessionTimerGeneration &+= 1
        let generation = sessionTimerGeneration
        sessionTimer = context.scheduleTimeout(millis: millis, for: self) { handler, context in
            handler.sessionTimerFired(generation: generation, context: context)
        }
    }

    private func disarmSessionTimer() {
        sessionTimer?.cancel()
        sessionTimer = nil
    }

    private func sessionTimerFired(generation: UInt32, context: ChannelHandlerContext) {
        guard generation == sessionTimerGeneration, !sessionObserver.bound else { return }
        sessionTimer = nil
        context.closeForTimeout(.webSocketSessionTimeout, logger: logger)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        writable = context.channel.isWritable
        if writable {
            releaseBlocked()
            budgetShare.giveBack(to: manager.backlogBudget)
        } else {
            tellBlocked()
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        drainWatch.writabilityChanged(context: context, limitMillis: manager.settings.maxUndrainedMillis) {
            let (handler, context) = loopBound.value
            // Already being closed (for its backlog): counted there.
            guard !handler.closing else { return }
            handler.logger.info(
                "closing a WebSocket whose client does not read",
                metadata: handler.sessionMetadata(["connection": "\(handler.connectionID)"]))
            handler.closing = true
            handler.manager.metrics.update { $0.slowClientsClosed += 1 }
            context.close(promise: nil)
        }
        context.fireChannelWritabilityChanged()
    }

    /// `metadata` plus the session streaming on this socket (or last bound to it), so that the
    /// line shows up in that session's story (docs/METRICS.md, "Logs").
    func sessionMetadata(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var m = metadata
        if case .bound(let s) = stream { m["session"] = "\(s)" } else if let lastSession { m["session"] = "\(lastSession)" }
        return m
    }

    func channelInactive(context: ChannelHandlerContext) {
        releaseBlocked()
        budgetShare.giveBack(to: manager.backlogBudget)
        drainWatch.cancel()
        disarmSessionTimer()
        manager.metrics.update { $0.connectionsOpen -= 1 }
        var ids: [String] = []
        if case .bound(let s) = stream { ids.append(s) }
        if let lastSession { ids.append(lastSession) }
        stream = .none
        manager.connectionClosed(connectionID, sessionIds: ids)
        releaseOutbound()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        releaseBlocked()
        budgetShare.giveBack(to: manager.backlogBudget)
        releaseOutbound()
    }

    /// Tells the session bound here, unless told already, that this socket is full.
    private func tellBlocked() {
        guard !toldBlocked, case .bound(let id) = stream, let session = manager.session(id) else { return }
        toldBlocked = true
        session.outputBlocked(true, on: connectionID)
    }

    /// Tells the session that was told this socket is full that it need not wait for it any
    /// more (it drained, or the stream or the connection is over).
    private func releaseBlocked() {
        guard toldBlocked else { return }
        toldBlocked = false
        if let lastSession { manager.session(lastSession)?.outputBlocked(false, on: connectionID) }
    }

    /// Lets go of the context, which holds this handler: kept, the two held each other for ever
    /// once the connection was gone (some 600 bytes of every WebSocket ever opened). A session
    /// that still holds the handler as its connection may push to it; its drain then finds no
    /// context and writes nothing.
    private func releaseOutbound() {
        closing = true
        context = nil
    }

    override var byteLimit: Int { manager.settings.maxBacklogBytes }

    /// What sessions queued, written on the loop (`OutboundQueue`).
    override func drain(_ ops: [Op]) {
        guard let context else { return }
        write(ops, context: context)
    }

    private func write(_ ops: [Op], context: ChannelHandlerContext) {
        guard !closing else { return }
        let limit = manager.settings.maxBacklogBytes
        if let refusal = BacklogGuard.refusal(
            incoming: BacklogGuard.bytes(of: ops), isWritable: writable, limit: limit, share: &budgetShare,
            budget: manager.backlogBudget, buffered: { BacklogGuard.bufferedBytes(of: context.channel) })
        {
            let (why, bound) =
                refusal == .budget
                ? ("the server's slow clients hold maxTotalBacklogBytes", ("maxTotalBacklogBytes", manager.backlogBudget.limit))
                : ("unsent data passed maxBacklogBytes", ("maxBacklogBytes", limit))
            logger.info(
                "closing a WebSocket whose client does not read: \(why)",
                metadata: sessionMetadata(["connection": "\(connectionID)", bound.0: "\(bound.1)"]))
            manager.metrics.update {
                $0.slowClientsClosed += 1
                if refusal == .budget { $0.slowClientsOverBudget += 1 }
            }
            closing = true
            context.close(promise: nil)
            return
        }
        for op in ops {
            switch op {
            case .text(let text):
                writeText(text, context: context)
            case .reply(_, let line):
                if let line { writeText(line + "\r\n", context: context) }
            case .end(let closeSocket):
                stream = .none
                releaseBlocked()
                if closeSocket { close(context: context) }
            }
        }
        context.flush()
    }

    private func writeText(_ text: String, context: ChannelHandlerContext) {
        guard !closing else { return }
        let frame = ReusedFrameBuffer.textFrame(text, allocator: Self.allocator)
        switch sessionObserver.textWritten(frame.payload) {
        case .bound?: disarmSessionTimer()
        case .unbound?: armSessionTimer(context: context)
        case nil: break
        }
        context.write(wrapOutboundOut(frame.bytes), promise: nil)
    }

    /// Writes a line through the same queue as session output, so that order is kept.
    private func send(_ line: String, context: ChannelHandlerContext) {
        guard self.context != nil else { return }
        self.send(line + "\r\n")
    }

    private func close(context: ChannelHandlerContext) {
        closeReplying(.normalClosure, context: context)
    }

    /// Handles every whole frame of the bytes read so far. Nothing more is read once the
    /// connection is closing (a close frame was written: RFC 6455 §5.5.1, §7.1.7).
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        parser.feed(unwrapInboundIn(data))
        while !closing {
            switch parser.next() {
            case .frame(let frame):
                handle(inbound.receive(frame), context: context)
            case .needMore:
                return
            case .fail(let code):
                inbound.fail()
                closeReplying(code, context: context)
            }
        }
    }

    private func handle(_ action: WebSocketInbound.Action, context: ChannelHandlerContext) {
        switch action {
        case .text(let text):
            handleMessage(text, context: context)
        case .binary:
            send(TLCPNotification.error(code: 67, message: "Binary frames are not TLCP").encoded(version: version), context: context)
        case .ping(let payload):
            // Nothing follows a close frame (RFC 6455 §5.5.1).
            guard !closing else { return }
            let pong = WebSocketServerFrame.encode(
                opcode: WebSocketServerFrame.pong, payload: payload, allocator: Self.allocator)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .close:
            closeReplying(.normalClosure, context: context)
        case .fail(let code):
            // The close frame is the last frame written (RFC 6455 §5.5.1): session output stops.
            closeReplying(code, context: context)
        case .nothing:
            break
        }
    }

    /// Writes a close frame with `code` unless one was written, then closes the socket.
    private func closeReplying(_ code: WebSocketErrorCode, context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        var data = Self.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let frame = WebSocketServerFrame.encode(opcode: WebSocketServerFrame.close, payload: data, allocator: Self.allocator)
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete {
            [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("WS error", metadata: ["error": "\(String(describing: error).logEscaped())"])
        context.close(promise: nil)
    }

    // MARK: - Requests

    private func handleMessage(_ text: String, context: ChannelHandlerContext) {
        manager.metrics.update { $0.requests += 1 }
        let batch: ParsedRequestBatch
        do {
            batch = try TLCPRequestParser.parseWebSocketMessage(text)
        } catch {
            manager.metrics.update { $0.requestErrors += 1 }
            send(TLCPNotification.error(code: error.code, message: error.message).encoded(version: version), context: context)
            return
        }
        switch batch.name {
        case .wsok:
            send(TLCPNotification.wsok.encoded(version: version), context: context)
        case .createSession, .bindSession:
            switch batch.requests.first {
            case .success(let request)?:
                handleStreamRequest(request, context: context)
            case .failure(let error)?:
                refuseStream(error.code, error.message, context: context)
            case nil:
                refuseStream(67, "Empty request", context: context)
            }
        case .control, .msg, .heartbeat:
            for result in batch.requests {
                switch result {
                case .success(let request):
                    route(request, context: context)
                case .failure(let error):
                    manager.metrics.update { $0.requestErrors += 1 }
                    let n: TLCPNotification =
                        error.requestId.map { .reqerr(requestId: $0, code: error.code, message: error.message) }
                        ?? .error(code: error.code, message: error.message)
                    send(n.encoded(version: version), context: context)
                }
            }
        }
    }

    private func refuseStream(_ code: Int, _ message: String, context: ChannelHandlerContext) {
        manager.metrics.update { $0.requestErrors += 1 }
        send(TLCPNotification.conerr(code: code, message: message).encoded(version: version), context: context)
    }

    private func handleStreamRequest(_ request: TLCPRequest, context: ChannelHandlerContext) {
        guard case .none = stream, self.context != nil else {
            refuseStream(69, "This WebSocket already carries a stream", context: context)
            return
        }
        switch request {
        case .createSession(let create):
            stream = .pending
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let (manager, version, clientIP, headers) = (self.manager, self.version, self.clientIP, self.headers)
            let eventLoop = context.eventLoop
            let connection: any OutboundConnection = self
            Task {
                let result = await manager.createSession(
                    create, version: version, connection: connection, clientIP: clientIP,
                    headers: headers.dictionary, eventLoop: eventLoop)
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.streamRequestDone(result, context: context)
                }
            }
        case .bindSession(let bind):
            guard let sessionId = bind.session ?? lastSession else {
                refuseStream(20, "No session to bind", context: context)
                return
            }
            stream = .pending
            if manager.bind(bind, sessionId: sessionId, version: version, connection: self, clientIP: clientIP) {
                streamRequestDone(.success(sessionId), context: context)
            } else {
                streamRequestDone(.failure(SessionRefusal(code: 20, message: "Session not found")), context: context)
            }
        default:
            break
        }
    }

    private func streamRequestDone(_ result: Result<String, SessionRefusal>, context: ChannelHandlerContext) {
        switch result {
        case .success(let sessionId):
            lastSession = sessionId
            if case .pending = stream { stream = .bound(sessionId) }
            // Bound to a socket that is already full: no writability change will say so.
            if !writable { tellBlocked() }
        case .failure(let refusal):
            stream = .none
            refuseStream(refusal.code, refusal.message, context: context)
        }
        let queued = waiting
        waiting = []
        for request in queued { route(request, context: context) }
    }

    /// Sends a control, message or heartbeat to its session.
    private func route(_ request: TLCPRequest, context: ChannelHandlerContext) {
        guard self.context != nil else { return }
        let explicit: String?
        switch request {
        case .control(let c): explicit = c.session
        case .message(let m): explicit = m.session
        case .heartbeat(let h): explicit = h.session
        default: return
        }
        if explicit == nil, case .pending = stream {
            waiting.append(request)
            return
        }
        let sessionId = explicit ?? lastSession
        let origin = RequestOrigin.webSocket(connectionID)
        var found = false
        if let sessionId {
            switch request {
            case .control(let c): found = manager.control(c, sessionId: sessionId, origin: origin, connection: self)
            case .message(let m): found = manager.message(m, sessionId: sessionId, origin: origin, connection: self)
            case .heartbeat: found = manager.heartbeat(sessionId: sessionId, origin: origin, connection: self) || true
            default: break
            }
        }
        guard !found else { return }
        switch request {
        case .control(let c):
            manager.metrics.update { $0.requestErrors += 1 }
            send(
                TLCPNotification.reqerr(requestId: c.requestId, code: 20, message: "Session not found").encoded(version: version),
                context: context)
        case .message(let m):
            manager.metrics.update { $0.requestErrors += 1 }
            send(
                TLCPNotification.reqerr(requestId: m.requestId, code: 20, message: "Session not found").encoded(version: version),
                context: context)
        default:
            break
        }
    }
}
