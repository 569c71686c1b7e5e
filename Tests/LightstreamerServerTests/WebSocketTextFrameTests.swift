import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import LightstreamerServer

/// `WebSocketTextFrame` and `WebSocketServerFrame` against NIO's `WebSocketFrameEncoder` as the
/// reference: the same bytes on the wire for every length class (7-bit, 16-bit and 64-bit
/// lengths and their edges), for text that is not ASCII, and for pong and close frames.
@Suite struct WebSocketTextFrameTests {
    static func reference(_ text: String) throws -> [UInt8] {
        try reference(.text, ByteBuffer(string: text))
    }

    static func reference(_ opcode: WebSocketOpcode, _ payload: ByteBuffer) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        defer { _ = try? channel.finish() }
        try channel.writeOutbound(WebSocketFrame(fin: true, opcode: opcode, data: payload))
        var bytes: [UInt8] = []
        while let part = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let b) = part else {
                Issue.record("a file region")
                break
            }
            bytes += b.readableBytesView
        }
        return bytes
    }

    @Test(arguments: [0, 1, 125, 126, 127, 65_535, 65_536, 70_001])
    func framesAsNIOsEncoderDoes(length: Int) throws {
        let text = String(repeating: "a", count: length)
        let frame = WebSocketTextFrame(text, allocator: ByteBufferAllocator())
        #expect(Array(frame.bytes.readableBytesView) == (try Self.reference(text)))
        #expect(Array(frame.payload) == Array(text.utf8))
        #expect(frame.headerLength == (length < 126 ? 2 : length < 65_536 ? 4 : 10))
    }

    @Test func countsTheLengthInBytesNotCharacters() throws {
        // 2-, 3- and 4-byte characters: 124 characters, 301 bytes, so a 16-bit length.
        let text = String(repeating: "é€😀", count: 33) + "U,1,1,x\r\n" + String(repeating: "ü", count: 16)
        let frame = WebSocketTextFrame(text, allocator: ByteBufferAllocator())
        #expect(Array(frame.bytes.readableBytesView) == (try Self.reference(text)))
        #expect(String(decoding: Array(frame.payload), as: UTF8.self) == text)
    }

    @Test(arguments: [0, 2, 125])
    func pongAndCloseFramesAsNIOsEncoderDoes(length: Int) throws {
        let payload = ByteBuffer(bytes: (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let pong = WebSocketServerFrame.encode(opcode: WebSocketServerFrame.pong, payload: payload, allocator: ByteBufferAllocator())
        #expect(Array(pong.readableBytesView) == (try Self.reference(.pong, payload)))
        let close = WebSocketServerFrame.encode(opcode: WebSocketServerFrame.close, payload: payload, allocator: ByteBufferAllocator())
        #expect(Array(close.readableBytesView) == (try Self.reference(.connectionClose, payload)))
    }
}
