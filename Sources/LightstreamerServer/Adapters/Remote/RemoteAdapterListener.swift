import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// The port a remote adapter connects to (the remote SDK is the TCP client). One remote is
/// served at a time; another one that connects meanwhile is closed at once. With a TLS context
/// the remote must complete a TLS handshake first (within the connection's handshake timeout);
/// a remote that fails it (plain TCP on a TLS port, an untrusted client) is logged and closed.
final class RemoteAdapterListener: Sendable {
    let connection: RemoteAdapterConnection
    private let channel: any Channel

    private init(connection: RemoteAdapterConnection, channel: any Channel) {
        self.connection = connection
        self.channel = channel
    }

    /// The bound port (useful with port 0).
    var port: Int? { channel.localAddress?.port }

    static func bind(
        host: String, port: Int, connection: RemoteAdapterConnection, sslContext: NIOSSLContext? = nil,
        logger: Logger = Logger(label: "lightstreamer.remote"),
        group: any EventLoopGroup
    ) async throws -> RemoteAdapterListener {
        let tlsTimeout = TimeAmount.milliseconds(max(1, connection.configuration.handshakeTimeoutMillis))
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 8)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ops = channel.pipeline.syncOperations
                    if let sslContext {
                        try ops.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try ops.addHandler(
                        RemoteAdapterChannelHandler(
                            connection: connection,
                            tlsHandshakeTimeout: sslContext == nil ? nil : tlsTimeout,
                            logger: logger))
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

/// Feeds one remote's socket into its `RemoteAdapterConnection`: at once on a plain port, after
/// the TLS handshake on a TLS port (so that a failed handshake never takes the port's one
/// remote slot, nor counts as a remote that came and went).
final class RemoteAdapterChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let connection: RemoteAdapterConnection
    private let logger: Logger
    /// Nil on a plain port.
    private let tlsHandshakeTimeout: TimeAmount?
    private var tlsTimer: Scheduled<Void>?
    private var attached = false

    init(connection: RemoteAdapterConnection, tlsHandshakeTimeout: TimeAmount?, logger: Logger) {
        self.connection = connection
        self.tlsHandshakeTimeout = tlsHandshakeTimeout
        self.logger = logger
    }

    private func remote(_ context: ChannelHandlerContext) -> String {
        context.channel.remoteAddress?.description ?? "?"
    }

    private func attach(context: ChannelHandlerContext) {
        attached = connection.attach(context.channel)
        if !attached { context.close(promise: nil) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if let timeout = tlsHandshakeTimeout {
            let channel = context.channel
            let logger = logger
            let remote = remote(context)
            tlsTimer = context.eventLoop.scheduleTask(in: timeout) {
                logger.warning("remote adapter refused: no TLS handshake in time", metadata: ["remote": "\(remote)"])
                channel.close(promise: nil)
            }
        } else {
            attach(context: context)
        }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent, tlsHandshakeTimeout != nil, !attached {
            tlsTimer?.cancel()
            tlsTimer = nil
            attach(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard attached else { return }
        connection.received(unwrapInboundIn(data), from: context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        tlsTimer?.cancel()
        tlsTimer = nil
        if attached { connection.closed(context.channel) }
        attached = false
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if tlsHandshakeTimeout != nil, !attached {
            logger.warning(
                "remote adapter refused: TLS handshake failed (a plain TCP remote on a TLS port?)",
                metadata: ["remote": "\(remote(context))", "error": "\(error)"])
        } else if attached {
            logger.warning("remote adapter connection error", metadata: ["remote": "\(remote(context))", "error": "\(error)"])
        }
        context.close(promise: nil)
    }
}
