import NIOEmbedded
import NIOPosix
import Testing

@testable import LightstreamerServer

/// The two objects of ours that every idle WebSocket session keeps, a `ServerSession` and its
/// connection's `WebSocketTLCPHandler`, stay within an allocator size class: 640 and 320 bytes
/// (mimalloc, the server's allocator, has classes at 512, 640, 768 and 256, 320, 384). A field
/// more that crosses a class costs every idle session the whole step, 128 or 64 bytes
/// (BENCHMARKS.md, "An idle session's objects in smaller size classes"): whoever adds one
/// learns it here and can make room, or move the limit knowingly.
@Suite struct IdleObjectSizeTests {
    #if os(Linux)
    /// The bytes an instance of `type` takes, from its class metadata: on Linux (no Objective-C
    /// interop) a class's metadata is its kind and superclass (8 bytes each), then flags and
    /// the instance address point (4 each), then the instance size (32 bits).
    static func instanceSize(_ type: AnyClass) -> Int {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        return Int(metadata.load(fromByteOffset: 24, as: UInt32.self))
    }

    final class OneWord { var value = 0 }
    final class ThreeWords {
        var a = 0
        var b: String? = nil
    }

    @Test func theMetadataIsReadWhereTheSizeIs() {
        // A heap object's header is 16 bytes; then the stored properties.
        #expect(Self.instanceSize(OneWord.self) == 24)
        #expect(Self.instanceSize(ThreeWords.self) == 40)
    }

    @Test func aWebSocketsHandlerFitsIn320Bytes() {
        let size = Self.instanceSize(WebSocketTLCPHandler.self)
        #expect(size <= 320, "WebSocketTLCPHandler is \(size) bytes")
    }

    @Test func aSessionFitsIn640Bytes() {
        let size = Self.instanceSize(ServerSession.self)
        #expect(size <= 640, "ServerSession is \(size) bytes")
    }

    @Test func anAdapterSetIsOneReference() {
        // Every session keeps one (it was 64 bytes inline).
        #expect(MemoryLayout<AdapterSet>.size == 8)
        var set = AdapterSet(name: "A", dataAdapters: [:])
        let copy = set
        set.name = "B"
        set.remoteWaitMillis = 5
        #expect(copy.name == "A" && copy.remoteWaitMillis == 10_000, "a copy keeps its values")
        #expect(set.name == "B" && set.remoteWaitMillis == 5)
    }
    #endif
}
