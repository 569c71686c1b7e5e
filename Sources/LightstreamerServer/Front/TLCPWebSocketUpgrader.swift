import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The upgrade to WebSocket: NIO's `NIOWebSocketServerUpgrader` checks the handshake and
/// builds the `101` response (RFC 6455 §4.2), and this upgrader sets the pipeline up itself,
/// with NIO's frame decoder only. NIO's upgrader would also add its frame encoder, which this
/// server does not need: the TLCP handler writes whole frames itself (`WebSocketServerFrame`).
/// The encoder cannot be removed once added, and it cost each connection a pipeline context,
/// the encoder and its header buffer (BENCHMARKS.md, "One handler for a WebSocket's inbound
/// rules").
final class TLCPWebSocketUpgrader: HTTPServerProtocolUpgrader, Sendable {
    private let handshake: NIOWebSocketServerUpgrader
    private let maxFrameSize: Int
    private let setUp: @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<Void>

    /// `shouldUpgrade`: as NIO's (nil refuses the upgrade; headers go into the `101`).
    /// `setUp`: adds the handlers behind the frame decoder.
    init(
        maxFrameSize: Int,
        shouldUpgrade: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<HTTPHeaders?>,
        setUp: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<Void>
    ) {
        self.maxFrameSize = maxFrameSize
        self.setUp = setUp
        // Only its handshake is used: `upgrade` below never calls its pipeline handler.
        self.handshake = NIOWebSocketServerUpgrader(
            maxFrameSize: maxFrameSize, automaticErrorHandling: false, shouldUpgrade: shouldUpgrade,
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() })
    }

    var supportedProtocol: String { handshake.supportedProtocol }
    var requiredUpgradeHeaders: [String] { handshake.requiredUpgradeHeaders }

    func buildUpgradeResponse(
        channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders
    ) -> EventLoopFuture<HTTPHeaders> {
        handshake.buildUpgradeResponse(
            channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
    }

    func upgrade(context: ChannelHandlerContext, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<Void> {
        let channel = context.channel
        do {
            try channel.pipeline.syncOperations.addHandler(
                ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maxFrameSize)))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return setUp(channel, upgradeRequest)
    }
}
