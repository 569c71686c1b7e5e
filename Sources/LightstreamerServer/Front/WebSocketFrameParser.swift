import NIOCore
import NIOWebSocket

/// Cuts the bytes a client sends on an upgraded connection into RFC 6455 frames (§5.2), as a
/// state machine without I/O. The TLCP WebSocket handler feeds it each read and hands the
/// frames to `WebSocketInbound`, which applies the rules on what they carry.
///
/// It replaces NIO's `WebSocketFrameDecoder` in a `ByteToMessageHandler`, which cost each idle
/// connection a pipeline context, the handler, its empty buffer and the decoder: some 540
/// bytes in five allocations (heaptrack, BENCHMARKS.md "Session bookkeeping without
/// allocations"). This parser holds nothing between reads unless a frame is cut by one.
///
/// Limits, checked as soon as a frame's header is complete (before its payload is waited for):
/// - a payload over `maxFrameBytes` fails with 1009 (message too big, §7.4.1);
/// - a control frame (opcode 0x8–0xF) that is not final or carries more than 125 bytes fails
///   with 1002 (protocol error, §5.5).
///
/// So it never buffers more than one frame's header and `maxFrameBytes` of payload. After a
/// failure it returns nothing more.
struct WebSocketFrameParser {
    enum Output {
        /// A whole frame; its payload is still masked (`WebSocketFrame.unmaskedData`).
        case frame(WebSocketFrame)
        /// The bytes so far end inside a frame (or there are none).
        case needMore
        /// The client broke a framing rule: close with this code and read no more.
        case fail(WebSocketErrorCode)
    }

    /// The largest payload a frame may carry.
    let maxFrameBytes: Int
    /// The bytes fed and not parsed yet. Between reads, only the start of a frame cut by the
    /// read, copied out of the read's buffer so that NIO can reuse that buffer.
    private var pending: ByteBuffer?
    private var failed = false

    init(maxFrameBytes: Int) {
        self.maxFrameBytes = max(0, maxFrameBytes)
    }

    /// Adds the bytes of a read; call `next()` until it returns `needMore` or `fail`.
    mutating func feed(_ bytes: ByteBuffer) {
        guard !failed, bytes.readableBytes > 0 else { return }
        guard var buffer = pending.take() else {
            pending = bytes
            return
        }
        var bytes = bytes
        buffer.writeBuffer(&bytes)
        pending = buffer
    }

    /// The next whole frame in the bytes fed so far.
    mutating func next() -> Output {
        guard !failed else { return .needMore }
        guard var buffer = pending.take() else { return .needMore }
        let start = buffer.readerIndex
        switch Self.header(&buffer) {
        case nil:
            buffer.moveReaderIndex(to: start)
            keep(buffer)
            return .needMore
        case let header?:
            if let code = violation(header) {
                failed = true
                return .fail(code)
            }
            guard let data = buffer.readSlice(length: header.length) else {
                buffer.moveReaderIndex(to: start)
                keep(buffer)
                return .needMore
            }
            if buffer.readableBytes > 0 { pending = buffer }
            return .frame(
                WebSocketFrame(
                    fin: header.first & 0x80 != 0, rsv1: header.first & 0x40 != 0, rsv2: header.first & 0x20 != 0,
                    rsv3: header.first & 0x10 != 0,
                    opcode: WebSocketOpcode(encodedWebSocketOpcode: header.first & 0x0F) ?? .continuation,
                    maskKey: header.maskKey, data: data))
        }
    }

    /// Keeps the start of a frame cut by the read. A slice of the read's buffer would keep the
    /// whole buffer (up to the read size) alive and stop NIO reusing it: it is copied once into
    /// a buffer of its own, which later reads then append to.
    private mutating func keep(_ buffer: ByteBuffer) {
        guard buffer.readableBytes > 0 else { return }
        if buffer.readerIndex == 0, buffer.capacity <= 2 * buffer.readableBytes + 64 {
            pending = buffer
            return
        }
        var copy = ByteBufferAllocator().buffer(capacity: buffer.readableBytes)
        var rest = buffer
        copy.writeBuffer(&rest)
        pending = copy
    }

    /// The capacity of the buffer held between reads (0: none), for tests.
    var heldCapacity: Int { pending?.capacity ?? 0 }

    /// A frame's header: its first byte, payload length and masking key.
    struct Header {
        var first: UInt8
        var length: Int
        var maskKey: WebSocketMaskingKey?
    }

    /// Reads a whole header, or returns nil (reader index then undefined) when the bytes end
    /// inside it. A 64-bit length over `Int.max` reads as `Int.max`: over any limit.
    static func header(_ buffer: inout ByteBuffer) -> Header? {
        guard let first = buffer.readInteger(as: UInt8.self), let second = buffer.readInteger(as: UInt8.self) else {
            return nil
        }
        var length = Int(second & 0x7F)
        if length == 126 {
            guard let l = buffer.readInteger(as: UInt16.self) else { return nil }
            length = Int(l)
        } else if length == 127 {
            guard let l = buffer.readInteger(as: UInt64.self) else { return nil }
            length = l > UInt64(Int.max) ? Int.max : Int(l)
        }
        var maskKey: WebSocketMaskingKey?
        if second & 0x80 != 0 {
            guard let key = buffer.readBytes(length: 4) else { return nil }
            maskKey = WebSocketMaskingKey(key)
        }
        return Header(first: first, length: length, maskKey: maskKey)
    }

    /// The close code a header calls for on its own (see the type's comment).
    private func violation(_ header: Header) -> WebSocketErrorCode? {
        if header.length > maxFrameBytes { return .messageTooLarge }
        let control = header.first & 0x08 != 0
        let final = header.first & 0x80 != 0
        if control && (!final || header.length > 125) { return .protocolError }
        return nil
    }
}
