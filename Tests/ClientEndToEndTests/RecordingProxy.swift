import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A loopback TCP proxy that forwards every connection to `target()` (read when a connection
/// arrives, so the target may start after the proxy) and records the bytes clients sent, to
/// tell which requests went through it.
final class RecordingProxy: Sendable {
    private let channel: any Channel
    private let sent: NIOLockedValueBox<[UInt8]>

    var port: Int { channel.localAddress?.port ?? 0 }

    /// What clients sent through the proxy, as text.
    var clientText: String { String(decoding: sent.withLockedValue { $0 }, as: UTF8.self) }

    private init(channel: any Channel, sent: NIOLockedValueBox<[UInt8]>) {
        self.channel = channel
        self.sent = sent
    }

    static func start(group: any EventLoopGroup, target: @escaping @Sendable () -> Int) async throws -> RecordingProxy {
        let sent = NIOLockedValueBox<[UInt8]>([])
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                ClientBootstrap(group: child.eventLoop).connect(host: "127.0.0.1", port: target()).flatMapThrowing { upstream in
                    // Both channels are on the child's event loop.
                    try upstream.pipeline.syncOperations.addHandler(Forwarder(peer: child, record: nil))
                    try child.pipeline.syncOperations.addHandler(
                        Forwarder(peer: upstream) { bytes in
                            sent.withLockedValue { $0.append(contentsOf: bytes) }
                        })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RecordingProxy(channel: channel, sent: sent)
    }

    func stop() async { try? await channel.close() }

    /// Writes what one side reads to the other, and closes the other when one side closes.
    private final class Forwarder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let peer: any Channel
        let record: (@Sendable ([UInt8]) -> Void)?

        init(peer: any Channel, record: (@Sendable ([UInt8]) -> Void)?) {
            self.peer = peer
            self.record = record
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            record?(Array(buffer.readableBytesView))
            peer.writeAndFlush(buffer, promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            peer.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
