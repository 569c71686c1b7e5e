import Logging
import NIOCore
import NIOHTTP1
import NIOTLS
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
            timer = context.scheduleTimeout(millis: millis, for: self) { handler, _ in
                handler.apply(handler.phases.timerFired(generation: generation))
            }
        case .close(let reason):
            timer?.cancel()
            timer = nil
            context.closeForTimeout(reason, logger: logger)
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
