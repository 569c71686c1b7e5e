import NIOCore

/// A whole server-to-client frame (RFC 6455 §5.2) in one buffer: FIN set, the opcode, no mask
/// (§5.1: a server never masks), the payload length in 7, 7+16 or 7+64 bits, then the payload.
/// The TLCP handler writes every frame this way: the pipeline has no frame encoder
/// (`TLCPWebSocketUpgrader`), and a `WebSocketFrame` would be boxed for the pipeline and its
/// header written from a second buffer.
enum WebSocketServerFrame {
    static let text: UInt8 = 0x1
    static let close: UInt8 = 0x8
    static let pong: UInt8 = 0xA

    /// A frame of `opcode` around `payloadLength` bytes that `writePayload` writes.
    static func encode(
        opcode: UInt8, payloadLength length: Int, allocator: ByteBufferAllocator, writePayload: (inout ByteBuffer) -> Void
    ) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: headerLength(payload: length) + length)
        writeHeader(opcode: opcode, payloadLength: length, into: &buffer)
        writePayload(&buffer)
        return buffer
    }

    /// The frame's header: FIN, `opcode`, and the payload's length.
    static func writeHeader(opcode: UInt8, payloadLength length: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(0x80 | (opcode & 0x0F)))
        if length < 126 {
            buffer.writeInteger(UInt8(length))
        } else if length <= Int(UInt16.max) {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
    }

    /// A frame carrying `payload`'s readable bytes.
    static func encode(opcode: UInt8, payload: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        var payload = payload
        return encode(opcode: opcode, payloadLength: payload.readableBytes, allocator: allocator) { $0.writeBuffer(&payload) }
    }

    /// 2, 4 or 10 bytes.
    static func headerLength(payload: Int) -> Int {
        payload < 126 ? 2 : payload <= Int(UInt16.max) ? 4 : 10
    }
}

/// A whole text frame (`WebSocketServerFrame`), with where its payload starts.
struct WebSocketTextFrame {
    /// Header and payload.
    let bytes: ByteBuffer
    /// Where the payload starts in `bytes`.
    let headerLength: Int

    /// The frame in a buffer of its own, of exactly the frame's size.
    init(_ text: String, allocator: ByteBufferAllocator) {
        let length = text.utf8.count
        var buffer = allocator.buffer(capacity: WebSocketServerFrame.headerLength(payload: length) + length)
        self.init(text, reusing: &buffer)
    }

    /// The frame written into `buffer`'s storage when nothing else holds it any more (grown if
    /// it is too small), else into new storage of exactly the frame's size. Not of the shared
    /// storage's capacity: a buffer NIO still holds belongs to a socket that could not take
    /// it, and every frame queued behind it then kept up to `ReusedFrameBuffer.keptCapacity`
    /// bytes for a few hundred of payload (the 16,000 slow sessions of BENCHMARKS.md, "Slow
    /// readers", held gigabytes).
    init(_ text: String, reusing buffer: inout ByteBuffer) {
        let length = text.utf8.count
        let header = WebSocketServerFrame.headerLength(payload: length)
        buffer.clear(minimumCapacity: header + length)
        WebSocketServerFrame.writeHeader(opcode: WebSocketServerFrame.text, payloadLength: length, into: &buffer)
        buffer.writeString(text)
        self.headerLength = header
        self.bytes = buffer
    }

    /// The text's bytes.
    var payload: ByteBufferView {
        bytes.readableBytesView.dropFirst(headerLength)
    }
}
