import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy between the soak clients and the server that can cut connections on
/// demand: `cut(fraction:)` resets (SO_LINGER 0, then close) a random share of the proxied
/// connections on both sides, as a network failure would.
final class CutProxy: Sendable {
    private let group: any EventLoopGroup
    private let upstreamPort: Int
    private let pairs = NIOLockedValueBox<[ObjectIdentifier: ProxyPair]>([:])
    private let channel = NIOLockedValueBox<(any Channel)?>(nil)
    private let accepted = NIOLockedValueBox(0)
    private let upstreamFailures = NIOLockedValueBox(0)

    init(group: any EventLoopGroup, upstreamPort: Int) {
        self.group = group
        self.upstreamPort = upstreamPort
    }

    /// Starts listening on 127.0.0.1 (a free port) and returns the port.
    func start() async throws -> Int {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { [self] inbound in
                inbound.eventLoop.makeCompletedFuture { self.attach(inbound) }
            }
        let listener = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        channel.withLockedValue { $0 = listener }
        guard let port = listener.localAddress?.port else { throw SoakError("proxy: no local port") }
        return port
    }

    func stop() async {
        let listener = channel.withLockedValue { $0 }
        try? await listener?.close()
        let all = pairs.withLockedValue { Array($0.values) }
        for pair in all { pair.reset() }
    }

    /// The live pairs, oldest first (diagnostics).
    func describeLive(limit: Int) -> [String] {
        pairs.withLockedValue { Array($0.values) }.sorted { $0.created < $1.created }.prefix(limit).map(\.debugDescription)
    }

    var liveConnections: Int { pairs.withLockedValue { $0.count } }
    var acceptedConnections: Int { accepted.withLockedValue { $0 } }
    var failedUpstreamConnects: Int { upstreamFailures.withLockedValue { $0 } }

    /// Resets `fraction` of the live connections (at least one when any is live); returns how many.
    @discardableResult
    func cut(fraction: Double) -> Int {
        let live = pairs.withLockedValue { Array($0.values) }
        guard !live.isEmpty else { return 0 }
        let n = max(1, Int((Double(live.count) * fraction).rounded()))
        let victims = live.shuffled().prefix(n)
        for pair in victims { pair.reset() }
        return victims.count
    }

    /// Connects the accepted channel to the server and glues the two together.
    private func attach(_ inbound: any Channel) {
        accepted.withLockedValue { $0 += 1 }
        let pair = ProxyPair(inbound: inbound)
        let key = ObjectIdentifier(pair)
        pairs.withLockedValue { $0[key] = pair }
        inbound.closeFuture.whenComplete { [self] _ in
            pairs.withLockedValue { _ = $0.removeValue(forKey: key) }
            pair.inboundClosed()
        }
        ClientBootstrap(group: inbound.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.autoRead, value: false)
            .connect(host: "127.0.0.1", port: upstreamPort)
            .whenComplete { [self] result in
                switch result {
                case .success(let outbound):
                    pair.connected(outbound)
                case .failure:
                    upstreamFailures.withLockedValue { $0 += 1 }
                    pair.reset()
                }
            }
    }
}

/// One proxied connection: the client's side (`inbound`) and the server's (`outbound`).
final class ProxyPair: Sendable {
    let inbound: any Channel
    let created = ContinuousClock.now
    private let outbound = NIOLockedValueBox<(any Channel)?>(nil)
    private let isReset = NIOLockedValueBox(false)
    private let inboundGone = NIOLockedValueBox(false)
    /// Bytes forwarded client → server and server → client, and whether the glue is complete.
    let traffic = NIOLockedValueBox((up: 0, down: 0, glued: false))

    var debugDescription: String {
        let t = traffic.withLockedValue { $0 }
        let out = outbound.withLockedValue { $0 }
        return "age=\(ContinuousClock.now - created) in.active=\(inbound.isActive) out=\(out.map { "active=\($0.isActive)" } ?? "none") "
            + "glued=\(t.glued) up=\(t.up) down=\(t.down) reset=\(isReset.withLockedValue { $0 })"
    }

    init(inbound: any Channel) { self.inbound = inbound }

    func connected(_ channel: any Channel) {
        outbound.withLockedValue { $0 = channel }
        // Not `inbound.isActive`: the accepted channel may become active only after the
        // upstream connect completed. Both callbacks run on the inbound's event loop.
        if isReset.withLockedValue({ $0 }) || inboundGone.withLockedValue({ $0 }) {
            Self.abort(channel)
            return
        }
        let toServer = ForwardHandler(partner: channel) { [self] n in traffic.withLockedValue { $0.up += n } }
        let toClient = ForwardHandler(partner: inbound) { [self] n in traffic.withLockedValue { $0.down += n } }
        // Each side forwards what it reads to the other; reading starts once both are glued.
        inbound.pipeline.addHandler(toServer).and(channel.pipeline.addHandler(toClient)).whenComplete { [self] result in
            switch result {
            case .success:
                traffic.withLockedValue { $0.glued = true }
                inbound.setOption(.autoRead, value: true).whenComplete { _ in }
                channel.setOption(.autoRead, value: true).whenComplete { _ in }
            case .failure:
                reset()
            }
        }
    }

    /// The client's side closed: the server's side is closed too once what was written to it is out.
    func inboundClosed() {
        inboundGone.withLockedValue { $0 = true }
        guard let out = outbound.withLockedValue({ $0 }) else { return }
        ForwardHandler.closeAfterPendingWrites(out)
    }

    /// Aborts both sides with a TCP reset (idempotent).
    func reset() {
        let first = isReset.withLockedValue { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        Self.abort(inbound)
        if let out = outbound.withLockedValue({ $0 }) { Self.abort(out) }
    }

    /// SO_LINGER with a zero timeout makes the close send an RST instead of a FIN.
    private static func abort(_ channel: any Channel) {
        guard let socket = channel as? any SocketOptionProvider else {
            channel.close(promise: nil)
            return
        }
        socket.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Writes what its channel reads to the partner channel, with backpressure: while the partner
/// cannot take more, this side stops reading (the partner's handler resumes it).
final class ForwardHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let partner: any Channel
    private let count: @Sendable (Int) -> Void

    init(partner: any Channel, count: @escaping @Sendable (Int) -> Void) {
        self.partner = partner
        self.count = count
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        count(bytes.readableBytes)
        partner.write(bytes, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner.flush()
        if !partner.isWritable {
            context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
        }
        context.fireChannelReadComplete()
    }

    /// This channel can take writes again: let the partner, which writes to it, read again.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            partner.setOption(.autoRead, value: true).whenComplete { _ in }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        Self.closeAfterPendingWrites(partner)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Closes `channel` after the bytes already written to it (write completions come in order).
    static func closeAfterPendingWrites(_ channel: any Channel) {
        channel.writeAndFlush(ByteBuffer()).whenComplete { _ in channel.close(promise: nil) }
    }
}
