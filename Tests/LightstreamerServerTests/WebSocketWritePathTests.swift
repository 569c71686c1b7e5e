import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import LightstreamerServer

/// The two ways `WebSocketTLCPHandler` writes text: whole frames from the context of NIO's
/// frame encoder when the pipeline has one (the server's), and `WebSocketFrame`s through the
/// pipeline when it has none. Both must carry the same TLCP text, in order.
@Suite struct WebSocketWritePathTests {
    static func handler() -> WebSocketTLCPHandler {
        let manager = SessionManager(
            engine: ItemEngine(adapterSets: []), settings: SessionSettings(), metrics: ServerMetrics(),
            logger: .init(label: "test"))
        return WebSocketTLCPHandler(
            manager: manager, version: .current, clientIP: "127.0.0.1", headers: UpgradeHeaders([:]),
            logger: .init(label: "test"), maxMessageBytes: 65_536)
    }

    /// A client's frame: masked (RFC 6455 §5.1), with a zero key so that the payload reads as is.
    static func textFrame(_ text: String, on channel: EmbeddedChannel) -> WebSocketFrame {
        WebSocketFrame(
            fin: true, opcode: .text, maskKey: WebSocketMaskingKey([0, 0, 0, 0]), data: channel.allocator.buffer(string: text))
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

    @Test func withTheFrameEncoderWholeFramesAreWrittenFromItsContext() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(WebSocketFrameEncoder())
        try channel.pipeline.syncOperations.addHandler(Self.handler())
        try Self.exchange(on: channel)
        var texts: [String] = []
        while var bytes = try channel.readOutbound(as: ByteBuffer.self) {
            // One buffer per frame: FIN and the text opcode, an unmasked 7-bit length, the text.
            let head = bytes.readInteger(as: UInt8.self)
            let length = bytes.readInteger(as: UInt8.self)
            #expect(head == 0x81)
            #expect(length.map(Int.init) == bytes.readableBytes)
            texts.append(bytes.readString(length: bytes.readableBytes) ?? "")
        }
        #expect(texts.first == "WSOK\r\n")
        #expect(texts.count == 2 && texts.last?.hasPrefix("REQERR,1,") == true, "\(texts)")
        _ = try? channel.finish()
    }

    @Test func withoutTheFrameEncoderFramesGoThroughThePipeline() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(Self.handler())
        try Self.exchange(on: channel)
        var texts: [String] = []
        while let frame = try channel.readOutbound(as: WebSocketFrame.self) {
            #expect(frame.opcode == .text && frame.fin)
            var data = frame.data
            texts.append(data.readString(length: data.readableBytes) ?? "")
        }
        #expect(texts.first == "WSOK\r\n")
        #expect(texts.count == 2 && texts.last?.hasPrefix("REQERR,1,") == true, "\(texts)")
        _ = try? channel.finish()
    }
}
