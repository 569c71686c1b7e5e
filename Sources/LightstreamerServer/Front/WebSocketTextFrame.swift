import NIOCore

/// A whole server-to-client text frame (RFC 6455 §5.2) in one buffer: FIN set, opcode 0x1, no
/// mask (§5.1: a server never masks), the payload length in 7, 7+16 or 7+64 bits, then the
/// UTF-8 text. The TLCP handler writes session output this way instead of handing a
/// `WebSocketFrame` to NIO's encoder, which would box the frame for the pipeline and write
/// the header from a second buffer.
struct WebSocketTextFrame {
    /// Header and payload.
    let bytes: ByteBuffer
    /// Where the payload starts in `bytes`.
    let headerLength: Int

    init(_ text: String, allocator: ByteBufferAllocator) {
        let length = text.utf8.count
        let headerLength = Self.headerLength(payload: length)
        var buffer = allocator.buffer(capacity: headerLength + length)
        buffer.writeInteger(UInt8(0x81))
        if length < 126 {
            buffer.writeInteger(UInt8(length))
        } else if length <= Int(UInt16.max) {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
        buffer.writeString(text)
        self.bytes = buffer
        self.headerLength = headerLength
    }

    /// 2, 4 or 10 bytes.
    static func headerLength(payload: Int) -> Int {
        payload < 126 ? 2 : payload <= Int(UInt16.max) ? 4 : 10
    }

    /// The text's bytes.
    var payload: ByteBufferView {
        bytes.readableBytesView.dropFirst(headerLength)
    }
}
