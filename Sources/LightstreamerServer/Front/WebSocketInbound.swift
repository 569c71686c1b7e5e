import NIOCore
import NIOWebSocket

/// The rules of RFC 6455 on the frames a client sends, as a state machine without I/O: it
/// takes each frame `WebSocketFrameParser` cut and says what it amounts to (a whole message, a
/// control frame to answer, or a violation that fails the connection, §7.1.7). The TLCP
/// WebSocket handler owns one per connection and does the I/O; the parser checks the frame
/// size limit and control frames' headers before their payload arrives, and this machine checks
/// them again on whole frames, so that it keeps every rule on its own (`WebSocketInboundTests`).
/// One value inside the handler rather than four channel handlers (checks, NIO's fragment
/// aggregator, text check, NIO's error handler) saves an idle connection four handlers and
/// their pipeline contexts (BENCHMARKS.md, "One handler for a WebSocket's inbound rules").
///
/// Violations and their close codes:
/// - 1002 (protocol error): an unmasked frame (§5.1, §5.3); a reserved bit set, as no extension
///   is negotiated (§5.2); a reserved opcode, 0x3–0x7 or 0xB–0xF (§5.2); a control frame that is
///   fragmented or carries more than 125 bytes (§5.5); a continuation frame without a message
///   started, or a new text or binary frame before the started one is finished (§5.4); a close
///   frame whose body is one byte or carries a code that may not be sent (§5.5.1, §7.4).
/// - 1007 (invalid frame payload data): a text message, once complete, that is not UTF-8, or a
///   close reason that is not (§5.6, §8.1, §7.4.1).
/// - 1009 (message too big): a message whose fragments add up to more than `maxMessageBytes`,
///   or that comes in more than `maxFragments` frames (§7.4.1).
struct WebSocketInbound {
    enum Action: Equatable {
        /// A whole text message, checked to be UTF-8.
        case text(String)
        /// A whole binary message (TLCP has none).
        case binary
        /// A ping: answer with a pong carrying this payload (§5.5.2).
        case ping(ByteBuffer)
        /// A valid close frame: answer with one and close (§5.5.1).
        case close
        /// A violation: send a close frame with this code, then close; nothing more is read.
        case fail(WebSocketErrorCode)
        /// Nothing to do (a fragment of a message still coming, a pong, or any frame after a
        /// failure).
        case nothing
    }

    /// The most bytes a message may add up to over its fragments.
    let maxMessageBytes: Int
    /// The most frames a message may come in.
    let maxFragments: Int
    /// The payload so far of the fragmented message in progress (nil: none in progress).
    private var partial: ByteBuffer?
    private var partialIsText = true
    private var fragments = 0
    private(set) var failed = false

    init(maxMessageBytes: Int, maxFragments: Int = 1024) {
        self.maxMessageBytes = max(0, maxMessageBytes)
        self.maxFragments = max(1, maxFragments)
    }

    mutating func receive(_ frame: WebSocketFrame) -> Action {
        guard !failed else { return .nothing }
        if let code = Self.violation(frame, messageInProgress: partial != nil) { return fail(code) }
        switch frame.opcode {
        case .ping:
            return .ping(frame.unmaskedData)
        case .pong:
            return .nothing
        case .connectionClose:
            return .close
        case .text, .binary:
            let isText = frame.opcode == .text
            if frame.fin { return message(frame.unmaskedData, isText: isText) }
            guard frame.length <= maxMessageBytes else { return fail(.messageTooLarge) }
            partial = frame.unmaskedData
            partialIsText = isText
            fragments = 1
            return .nothing
        default: // .continuation: `violation` refused it without a message in progress
            guard var buffer = partial else { return fail(.protocolError) }
            fragments += 1
            guard fragments <= maxFragments, buffer.readableBytes <= maxMessageBytes - frame.length else {
                return fail(.messageTooLarge)
            }
            partial = nil // `buffer` unique again: the append below writes in place
            var data = frame.unmaskedData
            buffer.writeBuffer(&data)
            guard frame.fin else {
                partial = buffer
                return .nothing
            }
            return message(buffer, isText: partialIsText)
        }
    }

    private mutating func message(_ payload: ByteBuffer, isText: Bool) -> Action {
        fragments = 0
        guard isText else { return .binary }
        guard let text = String(validating: payload.readableBytesView, as: UTF8.self) else {
            return fail(.dataInconsistentWithMessage)
        }
        return .text(text)
    }

    private mutating func fail(_ code: WebSocketErrorCode) -> Action {
        fail()
        return .fail(code)
    }

    /// Fails the connection for a reason found elsewhere (the parser's): nothing more counts.
    mutating func fail() {
        failed = true
        partial = nil
    }

    /// The close code a frame calls for on its own, or nil if it keeps the rules.
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
}
