import NIOCore
import NIOWebSocket

/// The framing rules of RFC 6455 that NIO's frame decoder and aggregator leave to the server,
/// checked on every frame from the client before the aggregator; a frame breaking one fails
/// the connection (§7.1.7): a close frame with the code, then the socket is closed.
///
/// - 1002 (protocol error): an unmasked frame (§5.1, §5.3); a reserved bit set, as no extension
///   is negotiated (§5.2); a reserved opcode, 0x3–0x7 or 0xB–0xF (§5.2); a control frame that is
///   fragmented or carries more than 125 bytes (§5.5); a continuation frame without a message
///   started, or a new text or binary frame before the started one is finished (§5.4); a close
///   frame whose body is one byte or carries a code that may not be sent (§5.5.1, §7.4).
/// - 1007 (invalid frame payload data): a text message, once complete, that is not UTF-8, or a
///   close reason that is not (§5.6, §8.1, §7.4.1). Checked on whole messages by
///   `WebSocketTextValidator`, behind the aggregator.
final class WebSocketFrameValidator: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var messageInProgress = false
    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let frame = unwrapInboundIn(data)
        if let code = Self.violation(frame, messageInProgress: messageInProgress) {
            fail(code, context: context)
            return
        }
        if !frame.opcode.isControlOpcode {
            messageInProgress = !frame.fin
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !failed else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(data, promise: promise)
    }

    /// The close code a frame calls for, or nil if it keeps the rules.
    static func violation(_ frame: WebSocketFrame, messageInProgress: Bool) -> WebSocketErrorCode? {
        guard frame.maskKey != nil, !frame.rsv1, !frame.rsv2, !frame.rsv3 else { return .protocolError }
        switch frame.opcode {
        case .continuation:
            return messageInProgress ? nil : .protocolError
        case .text, .binary:
            return messageInProgress ? .protocolError : nil
        case .ping, .pong, .connectionClose:
            guard frame.fin, frame.length <= 125 else { return .protocolError }
            return frame.opcode == .connectionClose ? closeBodyViolation(frame.unmaskedData) : nil
        default:
            return .protocolError
        }
    }

    /// A close frame's body: empty, or a code that may be sent and a UTF-8 reason.
    static func closeBodyViolation(_ body: ByteBuffer) -> WebSocketErrorCode? {
        var body = body
        if body.readableBytes == 0 { return nil }
        guard let code = body.readInteger(as: UInt16.self) else { return .protocolError }
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: break
        default: return .protocolError
        }
        return String(validating: body.readableBytesView, as: UTF8.self) == nil ? .dataInconsistentWithMessage : nil
    }

    private func fail(_ code: WebSocketErrorCode, context: ChannelHandlerContext) {
        failed = true
        WebSocketFailure.close(code, context: context)
    }
}

@available(*, unavailable)
extension WebSocketFrameValidator: Sendable {}

/// Fails the connection on a complete text message that is not UTF-8 (1007, RFC 6455 §8.1).
/// Sits behind `NIOWebSocketFrameAggregator`, so fragments have been joined, and turns the
/// aggregator's errors into close frames too: a message over the size limit (or of too many
/// fragments) 1009 (§7.4.1), anything else 1002.
final class WebSocketTextValidator: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let frame = unwrapInboundIn(data)
        if frame.opcode == .text, String(validating: frame.unmaskedData.readableBytesView, as: UTF8.self) == nil {
            failed = true
            WebSocketFailure.close(.dataInconsistentWithMessage, context: context)
            return
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? NIOWebSocketFrameAggregator.Error else {
            context.fireErrorCaught(error)
            return
        }
        guard !failed else { return }
        failed = true
        switch error {
        case .accumulatedFrameSizeIsTooLarge, .tooManyFragments:
            WebSocketFailure.close(.messageTooLarge, context: context)
        default:
            WebSocketFailure.close(.protocolError, context: context)
        }
    }
}

@available(*, unavailable)
extension WebSocketTextValidator: Sendable {}

enum WebSocketFailure {
    /// Sends a close frame with `code` from `context` toward the socket, then closes it. The
    /// handlers behind `context` are told first (`WebSocketConnectionFailed`), so that the TLCP
    /// handler, which writes its text frames past these checks, stops writing.
    static func close(_ code: WebSocketErrorCode, context: ChannelHandlerContext) {
        context.fireUserInboundEventTriggered(WebSocketConnectionFailed())
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
        context.writeAndFlush(NIOAny(frame)).whenComplete { [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }
}
