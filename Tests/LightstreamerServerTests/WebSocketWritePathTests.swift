import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import LightstreamerServer

/// How `WebSocketTLCPHandler` writes: whole frames it encodes itself, as buffers from its own
/// context (the pipeline has no frame encoder): the TLCP text in order, pongs, and the close
/// frame of a broken rule.
@Suite struct WebSocketWritePathTests {
    static func handler(on channel: EmbeddedChannel) -> WebSocketTLCPHandler {
        let manager = SessionManager(
            engine: ItemEngine(adapterSets: []), settings: SessionSettings(), metrics: ServerMetrics(),
            logger: .init(label: "test"))
        return WebSocketTLCPHandler(
            manager: manager, version: .current, clientIP: "127.0.0.1", headers: UpgradeHeaders([:]),
            maxMessageBytes: 65_536, eventLoop: channel.eventLoop)
    }

    /// A client's text frame, as bytes (the handler cuts frames itself).
    static func textFrame(_ text: String, on channel: EmbeddedChannel) -> ByteBuffer {
        channel.allocator.buffer(bytes: RawWebSocketFrames.text(text))
    }

    /// Sends two messages: `wsok`, then a control request without a session (refused).
    static func exchange(on channel: EmbeddedChannel) throws {
        // The handler writes only on an active channel.
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(Self.textFrame("wsok", on: channel))
        // Each drain of the handler's queue makes one frame.
        channel.embeddedEventLoop.run()
        try channel.writeInbound(Self.textFrame("control\r\nLS_reqId=1&LS_op=add&LS_subId=1", on: channel))
        channel.embeddedEventLoop.run()
    }

    /// Every frame the handler writes, parsed: (opcode, payload). Each buffer is one whole
    /// frame: FIN, an unmasked 7-bit length, the payload.
    static func frames(on channel: EmbeddedChannel) throws -> [(UInt8, [UInt8])] {
        var frames: [(UInt8, [UInt8])] = []
        while var bytes = try channel.readOutbound(as: ByteBuffer.self) {
            let head = bytes.readInteger(as: UInt8.self) ?? 0
            let length = bytes.readInteger(as: UInt8.self)
            #expect(head & 0x80 != 0)
            #expect(length.map(Int.init) == bytes.readableBytes)
            frames.append((head & 0x0F, Array(bytes.readableBytesView)))
        }
        return frames
    }

    @Test func wholeFramesAreWrittenFromTheHandlersContext() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(Self.handler(on: channel))
        try Self.exchange(on: channel)
        let texts = try Self.frames(on: channel).map { frame -> String in
            #expect(frame.0 == 0x1)
            return String(decoding: frame.1, as: UTF8.self)
        }
        #expect(texts.first == "WSOK\r\n")
        #expect(texts.count == 2 && texts.last?.hasPrefix("REQERR,1,") == true, "\(texts)")
        _ = try? channel.finish()
    }

    /// The handler keeps its context for its write queue's drains, and the context holds the
    /// handler: once the connection is gone that cycle must be broken, or every WebSocket ever
    /// opened would keep its handler and context for the life of the server.
    @Test func aClosedWebSocketsHandlerIsFreed() throws {
        weak var handlerLeft: WebSocketTLCPHandler?
        do {
            let channel = EmbeddedChannel()
            let handler = Self.handler(on: channel)
            handlerLeft = handler
            try channel.pipeline.syncOperations.addHandler(handler)
            try Self.exchange(on: channel)
            #expect(try Self.frames(on: channel).count == 2)
            _ = try? channel.finish()
            channel.embeddedEventLoop.run()
        }
        #expect(handlerLeft == nil)
    }

    /// A session may still hold the handler as its connection once the channel is closed: what
    /// it sends then is dropped, and nothing is written.
    @Test func whatASessionSendsAfterTheCloseIsDropped() throws {
        let channel = EmbeddedChannel()
        let handler = Self.handler(on: channel)
        try channel.pipeline.syncOperations.addHandler(handler)
        try Self.exchange(on: channel)
        #expect(try Self.frames(on: channel).count == 2)
        _ = try? channel.finish()
        let connection: any OutboundConnection = handler
        connection.send("U,1,1,a\r\n")
        connection.send("LOOP,0\r\n", thenEndStream: true)
        channel.embeddedEventLoop.run()
        #expect(try Self.frames(on: channel).isEmpty)
        #expect(connection.transport == .webSocket)
    }

    /// A ping gets its pong; a frame breaking a rule gets a close frame with its code, and
    /// nothing more is answered.
    @Test func controlFramesAndFailuresAreFramedToo() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(Self.handler(on: channel))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        typealias F = RawWebSocketFrames
        try channel.writeInbound(ByteBuffer(bytes: F.frame(opcode: 0x9, payload: [1, 2, 3])))
        // Unmasked: a protocol error (RFC 6455 §5.1). The ping after it, in the same read, is
        // not answered.
        try channel.writeInbound(
            ByteBuffer(bytes: F.frame(opcode: 0x1, payload: Array("wsok".utf8), masked: false) + F.frame(opcode: 0x9, payload: [4])))
        try channel.writeInbound(ByteBuffer(bytes: F.frame(opcode: 0x9, payload: [5])))
        channel.embeddedEventLoop.run()
        let frames = try Self.frames(on: channel)
        #expect(frames.map(\.0) == [0xA, 0x8])
        #expect(frames.first?.1 == [1, 2, 3])
        #expect(frames.last?.1 == [0x03, 0xEA]) // 1002
        _ = try? channel.finish()
    }
}
