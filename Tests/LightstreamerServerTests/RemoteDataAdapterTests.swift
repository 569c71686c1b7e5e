import ARI
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import LightstreamerServer

/// A remote Data Adapter on loopback: a scripted remote (the test) connects to the proxy's
/// port, as the SDKs do.
@Suite struct RemoteDataAdapterTests {
    /// Collects what the engine would receive.
    final class Recorder: ItemEventListener {
        let events = NIOLockedValueBox<[String]>([])
        func update(item: String, fields: [String: String?], isSnapshot: Bool) {
            let text = fields.keys.sorted().map { "\($0)=\((fields[$0] ?? nil) ?? "null")" }.joined(separator: ",")
            events.withLockedValue { $0.append("U \(item) \(isSnapshot) \(text)") }
        }
        func endOfSnapshot(item: String) { events.withLockedValue { $0.append("EOS \(item)") } }
        func clearSnapshot(item: String) { events.withLockedValue { $0.append("CS \(item)") } }
        func failure(_ error: any Error) { events.withLockedValue { $0.append("FAIL") } }
    }

    /// The remote side: lines in and out over one TCP connection.
    final class LineCollector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let continuation: AsyncStream<String>.Continuation
        let framer = NIOLockedValueBox(ARILineFramer())
        init(_ continuation: AsyncStream<String>.Continuation) { self.continuation = continuation }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            for line in framer.withLockedValue({ $0.append(buffer.readableBytesView) }) {
                if case .success(let text) = line { continuation.yield(text) }
            }
        }

        func channelInactive(context: ChannelHandlerContext) { continuation.finish() }
    }

    enum ScriptedRemote {
        /// With `tls`, the remote speaks TLS to `tlsHostname` (the certificate's name).
        static func connect(
            port: Int, group: any EventLoopGroup, tls: NIOSSLContext? = nil,
            tlsHostname: String? = nil
        ) async throws -> (any Channel, AsyncStream<String>) {
            let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(1000))
            let channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(
                                    context: tls,
                                    serverHostname: tlsHostname))
                        }
                        try channel.pipeline.syncOperations.addHandler(LineCollector(continuation))
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
            return (channel, stream)
        }
    }

    /// The server's side: a remote Data Adapter feeding `events`, on a loopback port.
    static func proxy(
        feeding events: any ItemEventListener, group: MultiThreadedEventLoopGroup
    ) async throws -> (RemoteAdapterConnection, RemoteDataAdapter, RemoteAdapterListener, Int) {
        // Handshake and request times far past the test's steps: the in-process suite's start
        // can stall the test's task for 15 s (a CI run), and the server then closed the scripted
        // remote or gave up on a request the script was about to answer. No test here waits for
        // a request to time out; they only bound a hang.
        let config = RemoteConnectionConfiguration(
            role: .data(name: "DEFAULT"), adapterSet: "REMOTE", requestTimeoutMillis: 30_000,
            handshakeTimeoutMillis: 60_000)
        let connection = RemoteAdapterConnection(configuration: config, logger: Logger(label: "test"))
        let adapter = RemoteDataAdapter(connection: connection, logger: Logger(label: "test"))
        adapter.setListener(events)
        let listener = try await RemoteAdapterListener.bind(host: "127.0.0.1", port: 0, connection: connection, group: group)
        return (connection, adapter, listener, try #require(listener.port))
    }

    static func send(_ line: String, on channel: any Channel) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: ARILineFramer.frame(line)))
    }

    /// `body`'s value, or `CancellationError` after `seconds`: a bound on a hang, not a timing
    /// check (the suite's start can stall a test's tasks for 15 s on a loaded machine).
    static func withTimeout<T: Sendable>(_ seconds: Double = 30, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            guard let first = try await group.next(), let value = first else {
                group.cancelAll()
                throw CancellationError()
            }
            group.cancelAll()
            return value
        }
    }

    /// A scripted remote connected to `port` through the handshake (`RAC`, then `DPI` answered
    /// with 1.9.1), the server's side of it ready; the remote's channel and its lines.
    static func readyRemote(
        port: Int, group: MultiThreadedEventLoopGroup, connection: RemoteAdapterConnection
    ) async throws -> (any Channel, AsyncStream<String>.Iterator) {
        let (remote, stream) = try await ScriptedRemote.connect(port: port, group: group)
        var lines = stream.makeAsyncIterator()
        try await send("1|RAC|S|enableClosePacket|S|true", on: remote)
        _ = try #require(await lines.next())
        try await send("10|DPI|S|ARI.version|S|1.9.1", on: remote)
        #expect(await connection.waitUntilReady(timeout: .seconds(30), on: group.next()))
        return (remote, lines)
    }

    /// Subscribes `item` through `adapter`, the remote accepting the `SUB` it reads; the
    /// request's id (the subscription's, in the remote's updates).
    static func subscribe(
        _ item: String, adapter: RemoteDataAdapter, remote: any Channel, lines: inout AsyncStream<String>.Iterator
    ) async throws -> Substring {
        let subscribed = Task { try await adapter.subscribe(item: item) }
        let sub = try #require(await lines.next())
        let id = try #require(sub.split(separator: "|").first)
        try await send("\(id)|SUB|V", on: remote)
        try await withTimeout { try await subscribed.value }
        return id
    }

    static func waitFor(_ events: NIOLockedValueBox<[String]>, count: Int) async throws {
        await waitUntil { events.withLockedValue { $0.count } >= count }
    }

    @Test func subscribeUpdatesDisconnectAndResubscribe() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await scenario(group)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    func scenario(_ group: MultiThreadedEventLoopGroup) async throws {
        let recorder = Recorder()
        let (connection, adapter, listener, port) = try await Self.proxy(feeding: recorder, group: group)

        // First remote: handshake, then a subscription with a snapshot.
        let (remote, stream) = try await ScriptedRemote.connect(port: port, group: group)
        var lines = stream.makeAsyncIterator()
        try await Self.send("1|RAC|S|enableClosePacket|S|true|S|SDK|S|Test", on: remote)
        let dpi = try #require(await lines.next())
        #expect(dpi.hasPrefix("10|DPI|S|ARI.version|S|1.9.1|"))
        try await Self.send("10|DPI|S|ARI.version|S|1.8.3", on: remote)
        #expect(await connection.waitUntilReady(timeout: .seconds(30), on: group.next()))

        let subscribed = Task { try await adapter.subscribe(item: "feed1") }
        let sub = try #require(await lines.next())
        #expect(sub == "11|SUB|S|feed1")
        for line in [
            "1|UD3|S|feed1|S|11|B|1|S|bid|S|1.0|S|raw|Y|AP8=", "1|UD3|S|feed1|S|99|B|0|S|bid|S|stale",
            "1|EOS|S|feed1|S|11", "11|SUB|V", "1|UD3|S|feed1|S|11|B|0|S|bid|S|#",
        ] {
            try await Self.send(line, on: remote)
        }
        try await Self.withTimeout { try await subscribed.value }
        try await Self.waitFor(recorder.events, count: 3)
        #expect(recorder.events.withLockedValue { $0 } == ["U feed1 true bid=1.0,raw=\u{0}ÿ", "EOS feed1", "U feed1 false bid=null"])

        // The remote goes away: the engine hears of it.
        try await remote.close()
        try await Self.waitFor(recorder.events, count: 4)
        #expect(recorder.events.withLockedValue { $0.last } == "FAIL")
        #expect(!connection.isReady)

        // A new remote gets the live item subscribed again.
        let (again, stream2) = try await ScriptedRemote.connect(port: port, group: group)
        var lines2 = stream2.makeAsyncIterator()
        try await Self.send("1|RAC|S|enableClosePacket|S|true", on: again)
        let dpi2 = try #require(await lines2.next())
        #expect(dpi2.hasPrefix("10|DPI|"))
        try await Self.send("10|DPI|S|ARI.version|S|1.9.1", on: again)
        let resub = try #require(await lines2.next())
        #expect(resub == "11|SUB|S|feed1")
        try await Self.send("11|SUB|V", on: again)

        // Unsubscribing sends USB; then the server closes politely.
        let unsubscribed = Task { await adapter.unsubscribe(item: "feed1") }
        let usb = try #require(await lines2.next())
        #expect(usb == "12|USB|S|feed1")
        try await Self.send("12|USB|V", on: again)
        await unsubscribed.value
        await listener.close(reason: "test over")
        let close = try #require(await lines2.next())
        #expect(close == "0|CLOSE|S|reason|S|test%20over")
    }

    /// Records the batches the engine would receive, and what came outside them.
    final class BatchRecorder: ItemEventListener {
        let events = NIOLockedValueBox<[String]>([])
        func update(item: String, fields: [String: String?], isSnapshot: Bool) {
            events.withLockedValue { $0.append("U \(item) \((fields["n"] ?? nil) ?? "null")") }
        }
        func update(_ batch: [ItemUpdateEvent]) {
            let text = batch.map { "\($0.item)=\(($0.fields["n"] ?? nil) ?? "null")" }.joined(separator: ",")
            events.withLockedValue { $0.append("BATCH \(text)") }
        }
        func endOfSnapshot(item: String) { events.withLockedValue { $0.append("EOS \(item)") } }
        func clearSnapshot(item: String) { events.withLockedValue { $0.append("CS \(item)") } }
        func failure(_ error: any Error) {}
    }

    /// The updates of one read reach the engine as one batch; an end or clear of a snapshot
    /// keeps its place between them, and lines of other subscriptions are left out.
    @Test func theUpdatesOfOneReadAreOneBatch() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let recorder = BatchRecorder()
        let (connection, adapter, listener, port) = try await Self.proxy(feeding: recorder, group: group)
        var (remote, lines) = try await Self.readyRemote(port: port, group: group, connection: connection)
        for item in ["a", "b"] { _ = try await Self.subscribe(item, adapter: adapter, remote: remote, lines: &lines) }
        // One write, so one read on the server's side (well under a socket buffer).
        let burst = [
            "1|UD3|S|a|S|11|B|0|S|n|S|1", "1|UD3|S|b|S|12|B|0|S|n|S|1", "1|UD3|S|a|S|99|B|0|S|n|S|stale",
            "1|UD3|S|a|S|11|B|0|S|n|S|2", "1|EOS|S|b|S|12", "1|UD3|S|b|S|12|B|0|S|n|S|2",
            "1|CLS|S|a|S|11", "1|UD3|S|a|S|11|B|0|S|n|S|3",
        ]
        try await remote.writeAndFlush(ByteBuffer(bytes: burst.flatMap { ARILineFramer.frame($0) }))
        try await Self.waitFor(recorder.events, count: 5)
        #expect(
            recorder.events.withLockedValue { $0 } == [
                "BATCH a=1,b=1,a=2", "EOS b", "BATCH b=2", "CS a", "BATCH a=3",
            ])
        await listener.close(reason: "test over")
        try? await remote.close()
        try await group.shutdownGracefully()
    }

    /// An update line past the remote's line bound (`ARILimits.maxLineLength`, 1 MiB), sent in
    /// pieces over the socket: dropped, not held or delivered, and the next line of the same
    /// connection reaches the engine. (With the bound raised, the long update is delivered and
    /// the test fails.)
    @Test func anUpdateLinePastTheBoundIsDroppedAndTheNextIsRead() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let recorder = BatchRecorder()
        let (connection, adapter, listener, port) = try await Self.proxy(feeding: recorder, group: group)
        var (remote, lines) = try await Self.readyRemote(port: port, group: group, connection: connection)
        let id = try await Self.subscribe("a", adapter: adapter, remote: remote, lines: &lines)

        // A well-formed update whose value alone is 1 MiB, in 64 KiB writes, then a short one.
        let long = Array("1|UD3|S|a|S|\(id)|B|0|S|n|S|".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20) + [0x0D, 0x0A]
        for start in stride(from: 0, to: long.count, by: 1 << 16) {
            try await remote.writeAndFlush(ByteBuffer(bytes: long[start..<min(start + (1 << 16), long.count)]))
        }
        try await Self.send("1|UD3|S|a|S|\(id)|B|0|S|n|S|after", on: remote)
        try await Self.waitFor(recorder.events, count: 1)
        #expect(recorder.events.withLockedValue { $0 } == ["BATCH a=after"])
        #expect(connection.isReady)
        await listener.close(reason: "test over")
        try? await remote.close()
        try await group.shutdownGracefully()
    }

    @Test func aRefusedSubscriptionIsASubscriptionError() async throws {
        #expect(
            RemoteDataAdapter.dataAdapterError(RemoteRequestFailure.refused(.subscription(message: "no such item")))
                == .subscription("no such item"))
        #expect(
            RemoteDataAdapter.dataAdapterError(RemoteRequestFailure.refused(.failure(message: "down")))
                == .failure("remote Data Adapter: EF down"))
        #expect(
            RemoteDataAdapter.dataAdapterError(RemoteRequestFailure.timedOut)
                == .failure("remote Data Adapter did not answer in time"))
    }
}
