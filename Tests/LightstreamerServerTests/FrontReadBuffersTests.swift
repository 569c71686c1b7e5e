import NIOCore
import Testing

@testable import LightstreamerServer

/// `FrontReadBuffers` in the read-buffer pool NIO keeps per connection: large reads get
/// larger buffers, and a connection back at rest reads into the small one the pool kept.
@Suite struct FrontReadBuffersTests {
    /// NIO's per-connection pool (one buffer, as with `maxMessagesPerRead` 1) around `sizes`.
    private struct Connection {
        var pool: NIOPooledRecvBufferAllocator
        let allocator = ByteBufferAllocator()

        init(_ sizes: any RecvByteBufferAllocator) {
            pool = NIOPooledRecvBufferAllocator(capacity: 1, recvAllocator: sizes)
        }

        /// One read of `pending` bytes as a socket gives them (at most what the buffer takes):
        /// returns the capacity of the buffer read into, and the bytes left to read.
        mutating func read(_ pending: Int) -> (capacity: Int, left: Int) {
            let (_, read) = pool.buffer(allocator: allocator) { buffer -> (Int, Int) in
                let n = min(pending, buffer.writableBytes)
                buffer.writeRepeatingByte(0x41, count: n)
                return (buffer.capacity, n)
            }
            pool.record(actualReadBytes: read.1)
            return (read.0, pending - read.1)
        }

        /// Reads a request of `bytes` to its end; the capacities of the buffers it took.
        mutating func request(_ bytes: Int) -> [Int] {
            var left = bytes
            var capacities: [Int] = []
            while left > 0 {
                let r = read(left)
                capacities.append(r.capacity)
                left = r.left
            }
            return capacities
        }
    }

    @Test func aConnectionAtRestReadsIntoTheSmallBufferAgainAfterALargeRequest() {
        var connection = Connection(FrontReadBuffers(base: 128, maximum: 65_536))
        // A browser's upgrade request: the buffer doubles after each read it fills.
        #expect(connection.request(792) == [128, 256, 512])
        // Then short control requests: two reads at most half full, and the size halves.
        let later = (0..<6).map { _ in connection.request(40) }
        #expect(later.last == [128])
        #expect(later.flatMap { $0 }.allSatisfy { $0 <= 512 })
        // The buffer kept is the first one: still 128 bytes.
        #expect(connection.request(100) == [128])
    }

    @Test func sizesDoubleUpToTheMaximumAndHalveBackToTheBase() {
        var sizes = FrontReadBuffers(base: 128, maximum: 1024)
        var seen: [Int] = []
        for _ in 0..<5 {
            _ = sizes.record(actualReadBytes: sizes.next)
            seen.append(sizes.next)
        }
        #expect(seen == [256, 512, 1024, 1024, 1024])
        // One small read does not shrink; two in a row halve; a middling one resets the count.
        #expect(sizes.record(actualReadBytes: 10) == true)
        #expect(sizes.next == 1024)
        #expect(sizes.record(actualReadBytes: 10) == true)
        #expect(sizes.next == 512)
        #expect(sizes.record(actualReadBytes: 10) == true)
        #expect(sizes.record(actualReadBytes: 300) == true)
        #expect(sizes.record(actualReadBytes: 10) == true)
        #expect(sizes.next == 512)
        #expect(sizes.record(actualReadBytes: 10) == true)
        #expect(sizes.next == 256)
        _ = sizes.record(actualReadBytes: 0)
        #expect(sizes.record(actualReadBytes: 0) == false)
        #expect(sizes.next == 128)
        // At the base it stays there.
        for _ in 0..<4 { #expect(sizes.record(actualReadBytes: 0) == false) }
        #expect(sizes.next == 128)
        #expect(sizes.nextBufferSize() == nil)
    }

    @Test func limitsAreRoundedToPowersOfTwoAndTheMaximumIsAtLeastTheBase() {
        let a = FrontReadBuffers(base: 100, maximum: 3000)
        #expect(a.base == 128)
        #expect(a.maximum == 4096)
        let b = FrontReadBuffers(base: 512, maximum: 10)
        #expect(b.maximum == 512)
        let c = FrontReadBuffers(base: -5, maximum: Int.max)
        #expect(c.base == 1)
        #expect(c.maximum == 1 << 30)
    }
}
