import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import TLCP

/// TLCP over HTTP (docs/protocol/TLCP.md §1.2): `<prefix>/lightstreamer/<request>.txt`, POST (or
/// GET), streams as chunked responses, control/msg/heartbeat batches answered line by line;
/// `/metrics` and the health endpoints (`HealthEndpoint`).
final class HTTPTLCPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let manager: SessionManager
    let urlPrefix: String
    let logger: Logger
    let maxBodyBytes: Int
    /// Puts a fresh WebSocket upgrade handler in front of this one, so that the next request on
    /// a keep-alive connection may upgrade (called before each keep-alive response ends).
    let armUpgrade: ((ChannelHandlerContext) -> Void)?
    /// The server's own pages and the admin API (nil: none, as before).
    let web: WebFront?

    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var tooLarge = false
    /// The response in progress.
    private var response: (id: ConnectionID, writer: HTTPResponseWriter, session: String?)?

    /// `maxBodyBytes` nil: the request limit the server advertises in CONOK.
    init(
        manager: SessionManager, urlPrefix: String, logger: Logger, maxBodyBytes: Int? = nil,
        armUpgrade: ((ChannelHandlerContext) -> Void)? = nil, web: WebFront? = nil
    ) {
        self.web = web
        self.manager = manager
        self.urlPrefix = urlPrefix
        self.logger = logger
        self.maxBodyBytes = maxBodyBytes ?? manager.settings.requestLimit
        self.armUpgrade = armUpgrade
    }

    private var drainWatch = DrainWatch()

    /// The session told that this connection's socket is full, and the stream response it was
    /// told for (`ServerSession.outputBlocked`): while the client does not read, the session
    /// folds its MERGE updates instead of writing them behind the unread bytes, as it does on
    /// a WebSocket. It is told again when the socket drains, when the response ends, or when
    /// the connection goes.
    private var toldBlocked: (session: String, response: ConnectionID)?
    /// What this connection took of the server-wide `BacklogBudget` while unwritable.
    /// Unchecked: only the event loop touches it, and `BacklogGuard.refusal`, which takes it
    /// `inout`, calls nothing that could; checked, every write began a dynamic exclusivity
    /// access to it.
    @exclusivity(unchecked) private var budgetShare = BacklogBudgetShare()

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            releaseBlocked()
            budgetShare.giveBack(to: manager.backlogBudget)
        } else {
            tellBlocked(context: context)
        }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        drainWatch.writabilityChanged(context: context, limitMillis: manager.settings.maxUndrainedMillis) {
            [logger, manager] in
            logger.info("closing an HTTP connection whose client does not read")
            manager.metrics.update { $0.slowClientsClosed += 1 }
            loopBound.value.close(promise: nil)
        }
        context.fireChannelWritabilityChanged()
    }

    /// Whether this connection is counted in `connectionsOpen` (until it closes or upgrades).
    private var counted = false

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { countOpen() }
    }

    func channelActive(context: ChannelHandlerContext) {
        countOpen()
        context.fireChannelActive()
    }

    private func countOpen() {
        guard !counted else { return }
        counted = true
        manager.metrics.update { $0.connectionsOpen += 1 }
    }

    private func countClosed() {
        guard counted else { return }
        counted = false
        manager.metrics.update { $0.connectionsOpen -= 1 }
    }

    /// Tells the session streaming on this connection, if its socket is full and the session
    /// was not told yet.
    private func tellBlocked(context: ChannelHandlerContext) {
        guard toldBlocked == nil, !context.channel.isWritable, let r = response, case .stream = r.writer.kind,
            let id = r.session, let session = manager.session(id)
        else { return }
        toldBlocked = (id, r.id)
        session.outputBlocked(true, on: r.id)
    }

    /// Tells the session that was told this socket is full that it need not wait for it.
    private func releaseBlocked() {
        guard let told = toldBlocked else { return }
        toldBlocked = nil
        manager.session(told.session)?.outputBlocked(false, on: told.response)
    }

    /// Closes the connection of a client that does not read (`why`), and tells the session
    /// streaming in the response at once that its stream is gone: it stops writing to the
    /// response and waits for a recovery bind. (Left bound, it went on writing to a response
    /// nobody drained until the channel's close reached `channelInactive`, which no longer
    /// found the response.)
    private func closeSlowClient(
        _ why: String, _ metadata: Logger.Metadata, overBudget: Bool = false, context: ChannelHandlerContext
    ) {
        logger.info("closing an HTTP connection whose client does not read: \(why)", metadata: metadata)
        manager.metrics.update {
            $0.slowClientsClosed += 1
            if overBudget { $0.slowClientsOverBudget += 1 }
        }
        if let r = response, let session = r.session {
            manager.connectionClosed(r.id, sessionIds: [session])
        }
        response = nil
        // Closed here and counted above: the watch must not close and count it again if its
        // time comes before the close reaches `channelInactive` (the WebSocket's handler
        // checks its `closing` for the same).
        drainWatch.cancel()
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        releaseBlocked()
        budgetShare.giveBack(to: manager.backlogBudget)
        drainWatch.cancel()
        countClosed()
        if let r = response, let session = r.session {
            manager.connectionClosed(r.id, sessionIds: [session])
        }
        response = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        releaseBlocked()
        budgetShare.giveBack(to: manager.backlogBudget)
        drainWatch.cancel()
        // Closed, or upgraded to WebSocket (the WS handler counts it from then on).
        countClosed()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = context.channel.allocator.buffer(capacity: 0)
            tooLarge = false
        case .body(var chunk):
            if (body?.readableBytes ?? 0) + chunk.readableBytes > maxBodyBytes {
                tooLarge = true
            } else {
                body?.writeBuffer(&chunk)
            }
        case .end:
            guard let h = head else { return }
            head = nil
            let b = body ?? context.channel.allocator.buffer(capacity: 0)
            body = nil
            if tooLarge {
                respondPlain(status: .payloadTooLarge, "Request too large\r\n", keepAlive: false, context: context)
                return
            }
            dispatch(h, body: b, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOWebSocketUpgradeError {
            // The upgrader declined (no TLCP subprotocol, wrong path): the request comes on
            // to `channelRead` and gets an HTTP answer.
            return
        }
        logger.debug("HTTP error", metadata: ["error": "\(String(describing: error).logEscaped())"])
        context.close(promise: nil)
    }

    // MARK: - Routing

    private func dispatch(_ head: HTTPRequestHead, body: ByteBuffer, context: ChannelHandlerContext) {
        let uri = Substring(head.uri)
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let query = uri.firstIndex(of: "?").map { uri[uri.index(after: $0)...] } ?? ""
        // HTTP/1.1 persistent connections (1.0 with `Connection: keep-alive`), unless the client
        // said `Connection: close`. Requests that arrive while a response is in progress wait
        // for it (`HTTPServerPipelineHandler`), so answers go out in request order.
        let keepAlive = head.isKeepAlive
        if let (status, text) = HealthEndpoint.response(path: path, health: manager.health, nodeName: manager.settings.nodeName) {
            respondPlain(status: status, text, keepAlive: keepAlive, contentType: HealthEndpoint.contentType, context: context)
            return
        }
        if path == "/metrics" {
            respondPlain(
                status: .ok, manager.metrics.prometheusText(nowMillis: monotonicMillis()), keepAlive: keepAlive,
                contentType: "text/plain; version=0.0.4; charset=utf-8", context: context)
            return
        }
        if path == urlPrefix + "/lightstreamer",
            HeaderTokens.contains(head.headers, named: "Upgrade", token: "websocket")
        {
            // The upgrader declined: no TLCP version among the offered subprotocols.
            let offered = FrontChannelInitializer.offeredSubprotocols(head.headers)
            respondPlain(
                status: .badRequest, "Unsupported WebSocket subprotocol: \(offered.joined(separator: ", "))\r\n",
                keepAlive: false, context: context)
            return
        }
        if let web, let reply = webReply(web, head: head, path: path, body: body, context: context) {
            respondWeb(reply, keepAlive: keepAlive, context: context)
            return
        }
        let base = urlPrefix + "/lightstreamer/"
        guard path.hasPrefix(base) else {
            if path == "/" || path == urlPrefix || path == urlPrefix + "/" {
                respondPlain(status: .ok, "Lightstreamer Swift Server\r\n", keepAlive: keepAlive, context: context)
            } else {
                respondPlain(status: .notFound, "Not found\r\n", keepAlive: keepAlive, context: context)
            }
            return
        }
        let fileName = path.dropFirst(base.count)
        guard let name = TLCPRequestName(rawValue: String(fileName.hasSuffix(".txt") ? fileName.dropLast(4) : "")),
            name != .wsok
        else {
            respondPlain(status: .notFound, "Not found\r\n", keepAlive: keepAlive, context: context)
            return
        }
        guard head.method == .POST || head.method == .GET else {
            respondPlain(status: .methodNotAllowed, "Use POST\r\n", keepAlive: keepAlive, context: context)
            return
        }
        manager.metrics.update { $0.requests += 1 }
        let isStream = name == .createSession || name == .bindSession
        let batch: ParsedRequestBatch
        do {
            batch = try TLCPRequestParser.parseHTTP(
                fileName: fileName, query: query, body: body.readableBytesView,
                contentType: head.headers.first(name: "Content-Type"))
        } catch {
            let n: TLCPNotification =
                isStream
                ? .conerr(code: error.code, message: error.message)
                : error.requestId.map { .reqerr(requestId: $0, code: error.code, message: error.message) }
                    ?? .error(code: error.code, message: error.message)
            manager.metrics.update { $0.requestErrors += 1 }
            respondPlain(status: .ok, n.encodedLine(), keepAlive: keepAlive, context: context)
            return
        }
        let version = batch.version ?? .current
        guard version.isSupported else {
            let n: TLCPNotification =
                isStream
                ? .conerr(code: 60, message: "Unsupported protocol version")
                : .error(code: 60, message: "Unsupported protocol version")
            respondPlain(status: .ok, n.encodedLine(), keepAlive: keepAlive, context: context)
            return
        }
        let kind: HTTPResponseWriter.Kind = isStream ? .stream : .batch(lines: batch.requests.count)
        let outbound = startResponse(kind: kind, keepAlive: keepAlive, context: context)
        let clientIP = context.channel.remoteAddress?.ipAddress
        if isStream {
            handleStream(batch, version: version, outbound: outbound, clientIP: clientIP, headers: head.headers, context: context)
        } else {
            handleBatch(batch, version: version, outbound: outbound)
        }
    }

    private func startResponse(kind: HTTPResponseWriter.Kind, keepAlive: Bool, context: ChannelHandlerContext) -> OutboundQueue {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let id = ConnectionIDs.next()
        let outbound = CallbackOutboundQueue(
            connectionID: id, transport: .http, eventLoop: context.eventLoop, byteLimit: manager.settings.maxBacklogBytes
        ) { ops in
            let (handler, context) = loopBound.value
            handler.drainResponse(id, ops, context: context)
        }
        response = (outbound.connectionID, HTTPResponseWriter(kind: kind, keepAlive: keepAlive), nil)
        return outbound
    }

    private func drainResponse(_ id: ConnectionID, _ ops: [OutboundQueue.Op], context: ChannelHandlerContext) {
        guard var r = response, r.id == id else { return }
        let limit = manager.settings.maxBacklogBytes
        switch BacklogGuard.refusal(
            incoming: BacklogGuard.bytes(of: ops), isWritable: context.channel.isWritable, limit: limit,
            share: &budgetShare, budget: manager.backlogBudget, buffered: { BacklogGuard.bufferedBytes(of: context.channel) })
        {
        case .connection?:
            return closeSlowClient("unsent data passed maxBacklogBytes", ["maxBacklogBytes": "\(limit)"], context: context)
        case .budget?:
            return closeSlowClient(
                "the server's slow clients hold maxTotalBacklogBytes", ["maxTotalBacklogBytes": "\(manager.backlogBudget.limit)"],
                overBudget: true, context: context)
        case nil:
            break
        }
        var parts: [HTTPServerResponsePart] = []
        let (ended, close) = r.writer.apply(ops) { parts.append($0) }
        // State first: writing the end may hand us the next pipelined request at once.
        response = ended ? nil : r
        if ended { releaseBlocked() }
        if ended && !close { armUpgrade?(context) }
        for part in parts { context.write(wrapOutboundOut(part), promise: nil) }
        context.flush()
        if ended && close {
            context.close(promise: nil)
        }
    }

    private func handleStream(
        _ batch: ParsedRequestBatch, version: TLCPVersion, outbound: OutboundQueue,
        clientIP: String?, headers: HTTPHeaders, context: ChannelHandlerContext
    ) {
        func refuse(_ code: Int, _ message: String) {
            manager.metrics.update { $0.requestErrors += 1 }
            outbound.send(TLCPNotification.conerr(code: code, message: message).encodedLine(version: version))
            outbound.endStream(closeSocket: false)
        }
        switch batch.requests.first {
        case .failure(let error)?:
            refuse(error.code, error.message)
        case .success(.createSession(let create))?:
            var headerMap: [String: String] = [:]
            for (k, v) in headers { headerMap[k.lowercased()] = v }
            let (manager, eventLoop) = (self.manager, context.eventLoop)
            let loopBound = NIOLoopBound((self, context), eventLoop: eventLoop)
            Task {
                let result = await manager.createSession(
                    create, version: version, connection: outbound, clientIP: clientIP,
                    headers: headerMap, eventLoop: eventLoop)
                switch result {
                case .success(let sid):
                    eventLoop.execute {
                        let (handler, context) = loopBound.value
                        guard handler.response?.id == outbound.connectionID else { return }
                        handler.response?.session = sid
                        // Its socket already full: no writability change will say so.
                        handler.tellBlocked(context: context)
                    }
                case .failure(let refusal):
                    manager.metrics.update { $0.requestErrors += 1 }
                    outbound.send(TLCPNotification.conerr(code: refusal.code, message: refusal.message).encodedLine(version: version))
                    outbound.endStream(closeSocket: false)
                }
            }
        case .success(.bindSession(let bind))?:
            guard let sid = bind.session else { return refuse(20, "Missing session") }
            response?.session = sid
            if manager.bind(bind, sessionId: sid, version: version, connection: outbound, clientIP: clientIP) {
                tellBlocked(context: context)
            } else {
                refuse(20, "Session not found")
            }
        default:
            refuse(67, "Malformed request")
        }
    }

    /// `REQERR,<id>,20` for a control or message naming a session this server does not have.
    private func replySessionNotFound(_ requestId: String, index: Int, on outbound: OutboundQueue, version: TLCPVersion) {
        manager.metrics.update { $0.requestErrors += 1 }
        let line = TLCPNotification.reqerr(requestId: requestId, code: 20, message: "Session not found").encoded(version: version)
        outbound.reply(index: index, line: line)
    }

    private func handleBatch(_ batch: ParsedRequestBatch, version: TLCPVersion, outbound: OutboundQueue) {
        for (index, result) in batch.requests.enumerated() {
            let origin = RequestOrigin.http(outbound.connectionID, index: index)
            switch result {
            case .failure(let error):
                manager.metrics.update { $0.requestErrors += 1 }
                let n: TLCPNotification =
                    error.requestId.map { .reqerr(requestId: $0, code: error.code, message: error.message) }
                    ?? .error(code: error.code, message: error.message)
                outbound.reply(index: index, line: n.encoded(version: version))
            case .success(.control(let c)):
                if let sid = c.session, manager.control(c, sessionId: sid, origin: origin, connection: outbound) { continue }
                replySessionNotFound(c.requestId, index: index, on: outbound, version: version)
            case .success(.message(let m)):
                if let sid = m.session, manager.message(m, sessionId: sid, origin: origin, connection: outbound) { continue }
                replySessionNotFound(m.requestId, index: index, on: outbound, version: version)
            case .success(.heartbeat(let h)):
                if let sid = h.session, manager.heartbeat(sessionId: sid, origin: origin, connection: outbound) { continue }
                outbound.reply(index: index, line: TLCPNotification.reqok(requestId: nil).encoded(version: version))
            case .success:
                outbound.reply(
                    index: index, line: TLCPNotification.error(code: 67, message: "Unexpected request").encoded(version: version))
            }
        }
    }

    /// The page or admin API answer for `path` (after the URL prefix), nil for other paths.
    private func webReply(
        _ web: WebFront, head: HTTPRequestHead, path: Substring, body: ByteBuffer,
        context: ChannelHandlerContext
    ) -> WebReply? {
        if !urlPrefix.isEmpty, path == urlPrefix {
            // Relative links of the welcome page need the trailing slash.
            return .now(.text(.movedPermanently, "Moved\r\n", headers: [("Location", urlPrefix + "/")]))
        }
        guard path.hasPrefix(urlPrefix + "/") else { return nil }
        let request = WebRequest(
            method: head.method, path: path.dropFirst(urlPrefix.count), headers: head.headers, body: body,
            clientIP: context.channel.remoteAddress?.ipAddress)
        return web.respond(request)
    }

    private func respondWeb(_ reply: WebReply, keepAlive: Bool, context: ChannelHandlerContext) {
        reply.deliver(context: context) { r, context in
            WebResponse.write(r, keepAlive: keepAlive, context: context, wrap: self.wrapOutboundOut) {
                if keepAlive { self.armUpgrade?(context) }
            }
        }
    }

    private func respondPlain(
        status: HTTPResponseStatus, _ text: String, keepAlive: Bool,
        contentType: String = "text/plain; charset=UTF-8", context: ChannelHandlerContext
    ) {
        let buffer = context.channel.allocator.buffer(string: text)
        var head = HTTPResponseWriter.head(stream: false, keepAlive: keepAlive, contentLength: buffer.readableBytes)
        head.status = status
        head.headers.replaceOrAdd(name: "Content-Type", value: contentType)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        if keepAlive { armUpgrade?(context) }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }
}
