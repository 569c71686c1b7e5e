import NIOCore
import NIOPosix

/// One buffer per thread for the text frames that thread's WebSocket handlers write.
///
/// A frame's buffer was allocated for each write (storage object and bytes: two allocations,
/// and two frees when the socket had taken it). NIO lets go of a buffer once the socket has
/// taken its bytes, which on a writable socket is before the handler's flush returns, so the
/// next frame finds the buffer unshared and is written into the same storage. When a socket
/// could not take everything, NIO still holds the buffer and `ByteBuffer`'s copy on write gives
/// the next frame storage of its own: a frame waiting to be sent is never written over.
///
/// Bound: a thread keeps one buffer of at most `keptCapacity` bytes; a larger frame's buffer is
/// not kept.
enum ReusedFrameBuffer {
    static let keptCapacity = 16 * 1024

    /// `@unchecked Sendable`: a slot is only ever reached through `slots`, which gives each
    /// thread its own.
    private final class Slot: @unchecked Sendable {
        var buffer: ByteBuffer?
    }

    private static let slots = ThreadSpecificVariable<Slot>()

    /// `text` as a whole text frame, in this thread's buffer when it is free.
    static func textFrame(_ text: String, allocator: ByteBufferAllocator) -> WebSocketTextFrame {
        let slot: Slot
        if let existing = slots.currentValue {
            slot = existing
        } else {
            slot = Slot()
            slots.currentValue = slot
        }
        let frame: WebSocketTextFrame
        if var buffer = slot.buffer.take() {
            frame = WebSocketTextFrame(text, reusing: &buffer)
        } else {
            frame = WebSocketTextFrame(text, allocator: allocator)
        }
        if frame.bytes.capacity <= keptCapacity { slot.buffer = frame.bytes }
        return frame
    }
}
