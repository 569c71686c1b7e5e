import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import LightstreamerServer

/// `WebSocketFrameParser` against NIO's `WebSocketFrameDecoder` on the same bytes cut at random
/// places, and its limits on their own.
struct WebSocketFrameParserTests {
    typealias F = RawWebSocketFrames

    /// A frame as both sides see it.
    struct Seen: Equatable {
        var first: UInt8
        var masked: Bool
        var payload: [UInt8]

        init(_ frame: WebSocketFrame) {
            first =
                (frame.fin ? 0x80 : 0) | (frame.rsv1 ? 0x40 : 0) | (frame.rsv2 ? 0x20 : 0) | (frame.rsv3 ? 0x10 : 0)
                | UInt8(webSocketOpcode: frame.opcode)
            masked = frame.maskKey != nil
            payload = Array(frame.unmaskedData.readableBytesView)
        }
    }

    /// Random frames, masked or not, any opcode and RSV bits, lengths in each of the three
    /// length encodings, control frames kept within their rules (NIO fails the others as
    /// this parser does, checked below).
    static func randomFrames(_ rng: inout some RandomNumberGenerator) -> [[UInt8]] {
        (0..<Int.random(in: 1...12, using: &rng)).map { _ in
            let opcode = UInt8.random(in: 0...15, using: &rng)
            let control = opcode & 0x8 != 0
            // Each length encoding: 7 bits, 16 bits, and (one frame in ten) 64 bits.
            let kind = Int.random(in: 0..<10, using: &rng)
            let length =
                control || kind < 5
                ? Int.random(in: 0...125, using: &rng)
                : kind < 9 ? Int.random(in: 126...3_000, using: &rng) : Int.random(in: 65_536...70_000, using: &rng)
            // Random bytes at a few places are enough to tell payloads apart.
            var payload = [UInt8](repeating: .random(in: 0...255, using: &rng), count: length)
            for _ in 0..<min(length, 8) { payload[Int.random(in: 0..<length, using: &rng)] = .random(in: 0...255, using: &rng) }
            return F.frame(
                opcode: opcode, payload: payload, fin: control || Bool.random(using: &rng),
                rsv: UInt8.random(in: 0...7, using: &rng), masked: Int.random(in: 0..<4, using: &rng) != 0)
        }
    }

    /// `bytes` cut into reads at random places.
    static func reads(_ bytes: [UInt8], _ rng: inout some RandomNumberGenerator) -> [ByteBuffer] {
        var reads: [ByteBuffer] = []
        var i = 0
        while i < bytes.count {
            // 1 byte to 64 KiB, each power of two as likely.
            let n = min(bytes.count - i, Int.random(in: 1...(1 << Int.random(in: 0...16, using: &rng)), using: &rng))
            reads.append(ByteBuffer(bytes: bytes[i..<(i + n)]))
            i += n
        }
        return reads
    }

    static func parse(_ reads: [ByteBuffer], max: Int) -> (frames: [Seen], failure: WebSocketErrorCode?) {
        var parser = WebSocketFrameParser(maxFrameBytes: max)
        var frames: [Seen] = []
        for read in reads {
            parser.feed(read)
            parsing: while true {
                switch parser.next() {
                case .frame(let f): frames.append(Seen(f))
                case .needMore: break parsing
                case .fail(let code): return (frames, code)
                }
            }
        }
        return (frames, nil)
    }

    /// NIO's decoder in a channel: its frames, and its error as a close code.
    static func nio(_ reads: [ByteBuffer], max: Int) throws -> (frames: [Seen], failure: WebSocketErrorCode?) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: max)))
        var frames: [Seen] = []
        var failure: WebSocketErrorCode?
        reading: for read in reads {
            do {
                try channel.writeInbound(read)
            } catch let error as NIOWebSocketError {
                failure = error == .invalidFrameLength ? .messageTooLarge : .protocolError
            }
            while let f = try channel.readInbound(as: WebSocketFrame.self) { frames.append(Seen(f)) }
            if failure != nil { break reading }
        }
        _ = try? channel.finish()
        return (frames, failure)
    }

    /// The same frames as NIO's decoder, whatever the reads, over 300 random streams.
    @Test func cutsTheSameFramesAsNIO() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let bytes = Self.randomFrames(&rng).flatMap { $0 }
            let reads = Self.reads(bytes, &rng)
            let ours = Self.parse(reads, max: 1 << 20)
            let theirs = try Self.nio(reads, max: 1 << 20)
            #expect(ours.failure == nil && theirs.failure == nil)
            #expect(ours.frames == theirs.frames)
            #expect(!ours.frames.isEmpty)
        }
    }

    /// Frames over the limit, and control frames fragmented or over 125 bytes, fail as NIO's
    /// decoder fails them, after the frames before them, and before their payload arrives.
    @Test(arguments: [
        (F.frame(opcode: 0x1, payload: Array(repeating: 7, count: 1_001)), WebSocketErrorCode.messageTooLarge),
        (F.frame(opcode: 0x2, payload: Array(repeating: 7, count: 70_000)), .messageTooLarge),
        (F.frame(opcode: 0x9, payload: Array(repeating: 7, count: 126)), .protocolError),
        (F.frame(opcode: 0x8, payload: [3, 0xE8], fin: false), .protocolError),
        (F.frame(opcode: 0xB, payload: [], fin: false), .protocolError),
    ])
    func limitsFailLikeNIO(_ bad: [UInt8], _ code: WebSocketErrorCode) throws {
        var rng = SystemRandomNumberGenerator()
        let good = F.text("first") + F.frame(opcode: 0x2, payload: Array(repeating: 1, count: 1_000))
        for _ in 0..<20 {
            let reads = Self.reads(good + bad + F.text("never"), &rng)
            let ours = Self.parse(reads, max: 1_000)
            let theirs = try Self.nio(reads, max: 1_000)
            #expect(ours.failure == code)
            #expect(theirs.failure == code)
            #expect(ours.frames == theirs.frames)
            #expect(ours.frames.count == 2)
        }
        // The header alone is enough to fail: nothing of the payload is waited for.
        var parser = WebSocketFrameParser(maxFrameBytes: 1_000)
        let header = Array(bad.prefix(bad.count - Int(bad[1] & 0x7F == 127 ? 70_000 : 0)))
        var headerOnly = ByteBuffer(bytes: header)
        _ = WebSocketFrameParser.header(&headerOnly)
        parser.feed(ByteBuffer(bytes: header.prefix(headerOnly.readerIndex)))
        guard case .fail(let failed) = parser.next() else {
            Issue.record("no failure on the header alone")
            return
        }
        #expect(failed == code)
        // Nothing more comes out after a failure.
        parser.feed(ByteBuffer(bytes: F.text("after")))
        guard case .needMore = parser.next() else {
            Issue.record("a frame after the failure")
            return
        }
    }

    /// A 64-bit length over `Int.max` (its top bit set) is over any limit.
    @Test func aLengthWithItsTopBitSetIsTooLarge() {
        var parser = WebSocketFrameParser(maxFrameBytes: Int(UInt32.max))
        parser.feed(ByteBuffer(bytes: [0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4]))
        guard case .fail(.messageTooLarge) = parser.next() else {
            Issue.record("not refused")
            return
        }
    }

    /// Between reads the parser holds only the start of a cut frame, in a buffer of its size,
    /// not the read's buffer; and nothing once the frame is whole.
    @Test func holdsOnlyTheCutFrameBetweenReads() {
        var parser = WebSocketFrameParser(maxFrameBytes: 65_536)
        let frame = F.text(String(repeating: "x", count: 300))
        var read = ByteBufferAllocator().buffer(capacity: 16_384)
        read.writeBytes(F.text("whole") + frame.prefix(100))
        parser.feed(read)
        guard case .frame = parser.next(), case .needMore = parser.next() else {
            Issue.record("expected one frame, then the cut one")
            return
        }
        #expect(parser.heldCapacity >= 100 && parser.heldCapacity < 1_024, "\(parser.heldCapacity)")
        parser.feed(ByteBuffer(bytes: frame.dropFirst(100)))
        guard case .frame(let f) = parser.next() else {
            Issue.record("the cut frame did not come whole")
            return
        }
        #expect(f.unmaskedData.readableBytes == 300)
        guard case .needMore = parser.next() else { return }
        #expect(parser.heldCapacity == 0)
    }
}
