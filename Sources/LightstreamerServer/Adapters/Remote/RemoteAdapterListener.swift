import Logging
import NIOCore
import NIOPosix

/// The port a remote adapter connects to (the remote SDK is the TCP client). One remote is
/// served at a time; another one that connects meanwhile is closed at once.
final class RemoteAdapterListener: Sendable {
    let connection: RemoteAdapterConnection
    private let channel: any Channel

    private init(connection: RemoteAdapterConnection, channel: any Channel) {
        self.connection = connection
        self.channel = channel
    }

    /// The bound port (useful with port 0).
    var port: Int? { channel.localAddress?.port }

    static func bind(host: String, port: Int, connection: RemoteAdapterConnection,
                     group: any EventLoopGroup) async throws -> RemoteAdapterListener {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 8)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RemoteAdapterChannelHandler(connection: connection))
                }
            }
            .bind(host: host, port: port).get()
        return RemoteAdapterListener(connection: connection, channel: channel)
    }

    /// Says `CLOSE` to the remote, then stops listening.
    func close(reason: String) async {
        connection.close(reason: reason)
        try? await channel.close()
    }
}

/// Feeds one remote's socket into its `RemoteAdapterConnection`.
final class RemoteAdapterChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let connection: RemoteAdapterConnection
    private var attached = false

    init(connection: RemoteAdapterConnection) {
        self.connection = connection
    }

    func channelActive(context: ChannelHandlerContext) {
        attached = connection.attach(context.channel)
        if !attached { context.close(promise: nil) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard attached else { return }
        connection.received(unwrapInboundIn(data), from: context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if attached { connection.closed(context.channel) }
        attached = false
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
