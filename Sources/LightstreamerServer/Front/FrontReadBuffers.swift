import NIOCore

/// Sizes the read buffers of client connections so that an idle connection keeps a small one.
///
/// NIO keeps a connection's read buffer for as long as the connection lives
/// (`NIOPooledRecvBufferAllocator`), and when a read fills it, it grows that same buffer in
/// place; it never shrinks it. With `AdaptiveRecvByteBufferAllocator`, every idle WebSocket
/// kept a buffer as large as its upgrade request had needed: 256 bytes for a short one, 512
/// for a browser's 792-byte request with its cookies and user agent.
///
/// This allocator tells the pool no size (`nextBufferSize()` is nil). The pool then keeps the
/// first buffer it was given (`base` bytes) and reuses it, cleared, as long as `record` says
/// the next read does not need more; when a read fills the buffer in use, the next reads get a
/// buffer of their own, twice as large each time up to `maximum`, that the pool does not keep.
/// After two reads in a row that used at most half of it, the size halves again, down to
/// `base`, where the kept buffer serves again. A burst of large requests costs an allocation
/// per read while it lasts; a connection at rest holds `base` bytes.
struct FrontReadBuffers: RecvByteBufferAllocator {
    /// The size of the buffer the pool keeps, and the smallest size used.
    let base: Int
    /// The largest read.
    let maximum: Int
    /// The size of the next read's buffer.
    private(set) var next: Int
    private var shrinkNext = false

    /// `base` and `maximum` are rounded up to powers of two, `maximum` to at least `base`.
    init(base: Int, maximum: Int) {
        let base = Self.powerOfTwo(atLeast: max(1, base))
        self.base = base
        self.maximum = max(base, Self.powerOfTwo(atLeast: maximum))
        self.next = base
    }

    func buffer(allocator: ByteBufferAllocator) -> ByteBuffer {
        allocator.buffer(capacity: next)
    }

    /// No size for the pool: it must not grow the buffer it keeps (see the type's comment).
    func nextBufferSize() -> Int? { nil }

    /// Adjusts the next read's size; true when it is above `base` (the pool then hands the
    /// read a buffer of `next` bytes instead of the one it keeps).
    mutating func record(actualReadBytes: Int) -> Bool {
        if actualReadBytes >= next, next < maximum {
            next = min(maximum, next &* 2)
            shrinkNext = false
        } else if next > base, actualReadBytes <= next / 2 {
            if shrinkNext {
                next /= 2
                shrinkNext = false
            } else {
                shrinkNext = true
            }
        } else {
            shrinkNext = false
        }
        return next > base
    }

    private static func powerOfTwo(atLeast n: Int) -> Int {
        var p = 1
        while p < n, p < 1 << 30 { p &*= 2 }
        return p
    }
}
