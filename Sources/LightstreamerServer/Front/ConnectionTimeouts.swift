import Logging
import NIOCore
import NIOHTTP1
import NIOTLS
import NIOWebSocket
import TLCP

/// The per-phase timeouts of a connection (`ConnectionPhases`): sits right after TLS (or first),
/// sees every byte before the HTTP decoder, and closes the connection when the phase it is in
/// lasts too long or a request head grows too large. `HTTPPhaseObserver` tells it where
/// requests and responses are. A WebSocket upgrade removes it: the TLCP WebSocket handler times
/// the wait for a session from there on.
final class ConnectionTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var phases: ConnectionPhases
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    private var started = false
    private let logger: Logger

    init(limits: ConnectionPhases.Limits, tls: Bool, logger: Logger) {
        phases = ConnectionPhases(limits: limits, tls: tls)
        self.logger = logger
    }

    var phase: ConnectionPhases.Phase { phases.phase }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    private func start() {
        guard !started else { return }
        started = true
        apply(phases.start())
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let count = unwrapInboundIn(data).readableBytes
        apply(phases.bytesArriving())
        context.fireChannelRead(data)
        apply(phases.bytesConsumed(count))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            apply(phases.handshakeCompleted())
        }
        context.fireUserInboundEventTriggered(event)
    }

    // Events from the observers further down the pipeline.
    func headReceived() { apply(phases.headReceived()) }
    func requestEnded() { apply(phases.requestEnded()) }
    func responseEnded() { apply(phases.responseEnded()) }
    func upgraded() { apply(phases.upgraded()) }

    private func apply(_ action: ConnectionPhases.Action) {
        guard let context else { return }
        switch action {
        case .none:
            break
        case .disarm:
            timer?.cancel()
            timer = nil
        case .arm(let millis, let generation):
            timer?.cancel()
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            let delay = TimeAmount.nanoseconds(Saturating.nanoseconds(millis: Int64(millis)))
            timer = context.eventLoop.scheduleTask(in: delay) {
                let handler = loopBound.value
                handler.apply(handler.phases.timerFired(generation: generation))
            }
        case .close(let reason):
            timer?.cancel()
            timer = nil
            logger.debug(
                "closing a connection",
                metadata: [
                    "reason": "\(reason.rawValue)",
                    "remote": "\(context.channel.remoteAddress?.description ?? "?")",
                ])
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension ConnectionTimeoutHandler: Sendable {}

/// Tells `ConnectionTimeoutHandler` when a request's head and end arrive and when its response
/// ends. Placed after `HTTPServerPipelineHandler`, so a pipelined request shows up once the
/// previous response is out; removed with the other HTTP handlers on a WebSocket upgrade.
final class HTTPPhaseObserver: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeouts: ConnectionTimeoutHandler

    init(timeouts: ConnectionTimeoutHandler) {
        self.timeouts = timeouts
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: timeouts.headReceived()
        case .body: break
        case .end: timeouts.requestEnded()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            timeouts.responseEnded()
        }
        context.write(data, promise: promise)
    }
}

@available(*, unavailable)
extension HTTPPhaseObserver: Sendable {}

/// Finds when a session is bound on a WebSocket (the server's `CONOK`, which answers both
/// `create_session` and `bind_session`, goes out) and when it no longer is (`LOOP` or `END`),
/// for the WebSocket's session timeout (`ConnectionPhases.Limits.webSocketSessionMillis`),
/// which `WebSocketTLCPHandler` runs once the upgrade has taken `ConnectionTimeoutHandler` out
/// of the pipeline. A text frame may carry several lines: before a session, every line is
/// looked at (few, short frames); with one, only the last line of each frame, as nothing
/// follows `LOOP` or `END` on a stream, so the frames of updates cost a look at their tail.
///
/// A value inside the handler, told of each text frame it writes: as a pipeline handler,
/// every hop would cost each write a few retains.
struct WebSocketSessionObserver {
    enum Change: Equatable {
        /// A session is now bound: no timeout.
        case bound
        /// The session ended or asked to be rebound: the timeout starts again.
        case unbound
    }

    private(set) var bound = false
    private static let conok = Array("CONOK,".utf8)
    private static let loop = Array("LOOP,".utf8)
    private static let end = Array("END,".utf8)

    /// A text frame with `bytes` is being written; returns the change it makes, if any. A frame
    /// that binds a session and ends it too (`CONOK` … `LOOP`) counts as `unbound`.
    mutating func textWritten(_ bytes: ByteBufferView) -> Change? {
        var change: Change?
        if !bound, Self.someLine(of: bytes, startsWith: Self.conok) {
            bound = true
            change = .bound
        }
        if bound {
            let last = Self.lastLine(of: bytes)
            if last.starts(with: Self.loop) || last.starts(with: Self.end) {
                bound = false
                change = .unbound
            }
        }
        return change
    }
}

extension WebSocketSessionObserver {
    static func someLine(of bytes: ByteBufferView, startsWith prefix: [UInt8]) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index...].starts(with: prefix) { return true }
            guard let lf = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) else { return false }
            index = bytes.index(after: lf)
        }
        return false
    }

    /// The last line of `bytes`, its line end (and a final line end) left out.
    static func lastLine(of bytes: ByteBufferView) -> ByteBufferView {
        var end = bytes.endIndex
        while end > bytes.startIndex,
            bytes[bytes.index(before: end)] == UInt8(ascii: "\n") || bytes[bytes.index(before: end)] == UInt8(ascii: "\r")
        {
            end = bytes.index(before: end)
        }
        let body = bytes[bytes.startIndex..<end]
        guard let lf = body.lastIndex(of: UInt8(ascii: "\n")) else { return body }
        return body[body.index(after: lf)...]
    }
}
