import NIOCore
import Testing

@testable import LightstreamerServer

/// `ReusedFrameBuffer`: frames written into a thread's reused buffer are the frames
/// `WebSocketServerFrame.encode` makes, and a frame still held (a write NIO has not finished)
/// is never written over.
@Suite struct ReusedFrameBufferTests {
    static let allocator = ByteBufferAllocator()

    static func reference(_ text: String) -> [UInt8] {
        let frame = WebSocketServerFrame.encode(opcode: WebSocketServerFrame.text, payloadLength: text.utf8.count, allocator: allocator) {
            $0.writeString(text)
        }
        return Array(frame.readableBytesView)
    }

    static func address(_ buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeReadableBytes { UnsafeRawPointer($0.baseAddress) }
    }

    /// Lengths around each header form (7, 16 and 64-bit lengths) and around the kept capacity.
    @Test(arguments: [0, 1, 125, 126, 127, 1_000, 65_535, 65_536, ReusedFrameBuffer.keptCapacity - 2, ReusedFrameBuffer.keptCapacity + 1])
    func framesEqualTheEncodersWhateverCameBefore(length: Int) {
        let text = String(repeating: "x", count: length)
        for before in ["", "PROBE\r\n", String(repeating: "y", count: 70_000)] {
            _ = ReusedFrameBuffer.textFrame(before, allocator: Self.allocator)
            let frame = ReusedFrameBuffer.textFrame(text, allocator: Self.allocator)
            #expect(Array(frame.bytes.readableBytesView) == Self.reference(text), "length \(length) after \(before.utf8.count)")
            #expect(Array(frame.payload) == Array(text.utf8))
        }
    }

    @Test func aFreeBufferIsReusedAndAHeldOneIsNotWrittenOver() {
        // Once the previous frame is let go of, the next one goes into the same storage: a short
        // frame after a 4,000-byte one has its capacity (allocated afresh, it would have a
        // short one; the address alone could match by malloc's reuse).
        var first: WebSocketTextFrame? = ReusedFrameBuffer.textFrame(String(repeating: "a", count: 4_000), allocator: Self.allocator)
        let firstAddress = first.map { Self.address($0.bytes) } ?? nil
        let firstCapacity = first?.bytes.capacity ?? 0
        first = nil
        let second = ReusedFrameBuffer.textFrame("U,1,1,b\r\n", allocator: Self.allocator)
        #expect(Self.address(second.bytes) == firstAddress)
        #expect(second.bytes.capacity == firstCapacity)
        #expect(Array(second.bytes.readableBytesView) == Self.reference("U,1,1,b\r\n"))

        // `second` is still held (as NIO holds a frame its socket has not taken): the next frame
        // gets storage of its own, of its own size rather than the held buffer's 4,000 bytes
        // (each frame queued behind a full socket kept that much), and `second` keeps its bytes.
        let third = ReusedFrameBuffer.textFrame("U,1,1,c\r\n", allocator: Self.allocator)
        #expect(Self.address(third.bytes) != Self.address(second.bytes))
        #expect(third.bytes.capacity < 1_000, "a frame behind a held one got \(third.bytes.capacity) bytes")
        #expect(Array(second.bytes.readableBytesView) == Self.reference("U,1,1,b\r\n"))
        #expect(Array(third.bytes.readableBytesView) == Self.reference("U,1,1,c\r\n"))
    }

    @Test func aBufferLargerThanTheBoundIsNotKept() {
        let large = ReusedFrameBuffer.textFrame(
            String(repeating: "z", count: ReusedFrameBuffer.keptCapacity + 1), allocator: Self.allocator)
        let largeAddress = Self.address(large.bytes)
        #expect(large.bytes.capacity > ReusedFrameBuffer.keptCapacity)
        // Still held: had it been kept, the next frame would find it shared and copy it, at the
        // large capacity.
        let small = ReusedFrameBuffer.textFrame("PROBE\r\n", allocator: Self.allocator)
        #expect(small.bytes.capacity <= ReusedFrameBuffer.keptCapacity)
        #expect(Self.address(small.bytes) != largeAddress)
    }
}
