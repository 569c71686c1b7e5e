import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The upgrade to WebSocket: NIO's `NIOWebSocketServerUpgrader` checks the handshake and
/// builds the `101` response (RFC 6455 §4.2), and this upgrader sets the pipeline up itself,
/// adding no frame codec. NIO's upgrader would add its frame decoder and encoder, which this
/// server does not need: the TLCP handler cuts the client's bytes into frames
/// (`WebSocketFrameParser`) and writes whole frames itself (`WebSocketServerFrame`). The
/// encoder cannot be removed once added, and the two cost each connection two pipeline
/// contexts, the handlers and their buffers (BENCHMARKS.md, "One handler for a WebSocket's
/// inbound rules" and "Session bookkeeping without allocations").
final class TLCPWebSocketUpgrader: HTTPServerProtocolUpgrader, Sendable {
    private let handshake: NIOWebSocketServerUpgrader
    private let setUp: @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<Void>

    /// `shouldUpgrade`: as NIO's (nil refuses the upgrade; headers go into the `101`).
    /// `setUp`: adds the handlers that take the connection's bytes.
    init(
        shouldUpgrade: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<HTTPHeaders?>,
        setUp: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<Void>
    ) {
        self.setUp = setUp
        // Only its handshake is used: `upgrade` below never calls its pipeline handler.
        self.handshake = NIOWebSocketServerUpgrader(
            automaticErrorHandling: false, shouldUpgrade: shouldUpgrade,
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
        setUp(context.channel, upgradeRequest)
    }
}
