import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A raw TCP client for socket tests: sends bytes, collects everything received, and waits
/// (bounded) until the received text contains something. Enough to speak HTTP/1.1 and, with
/// `wsText`, masked WebSocket text frames.
final class RawTestConnection: Sendable {
    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let received = NIOLockedValueBox<[UInt8]>([])
        let closed = NIOLockedValueBox(false)
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            received.withLockedValue { $0.append(contentsOf: buffer.readableBytesView) }
        }
        func channelInactive(context: ChannelHandlerContext) {
            closed.withLockedValue { $0 = true }
        }
    }

    let channel: any Channel
    private let collector: Collector

    private init(channel: any Channel, collector: Collector) {
        self.channel = channel
        self.collector = collector
    }

    static func connect(port: Int, group: any EventLoopGroup) async throws -> RawTestConnection {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { ch in ch.eventLoop.makeCompletedFuture { try ch.pipeline.syncOperations.addHandler(collector) } }
            .connect(host: "127.0.0.1", port: port).get()
        return RawTestConnection(channel: channel, collector: collector)
    }

    func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    /// Sends one masked WS text frame.
    func wsText(_ text: String) async throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame.append(0x80 | 126)
            frame.append(UInt8(payload.count >> 8))
            frame.append(UInt8(payload.count & 0xFF))
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame.append(contentsOf: mask)
        for (i, b) in payload.enumerated() { frame.append(b ^ mask[i % 4]) }
        try await send(frame)
    }

    /// Everything received so far, as text (frame headers and chunk sizes included).
    var text: String { String(decoding: collector.received.withLockedValue { $0 }, as: UTF8.self) }
    var isClosed: Bool { collector.closed.withLockedValue { $0 } }
    /// Everything received so far, as bytes.
    var bytes: [UInt8] { collector.received.withLockedValue { $0 } }

    /// Waits until the server has closed the connection; false after `seconds`.
    @discardableResult
    func waitClosed(seconds: Double = 5) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if isClosed { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return isClosed
    }

    /// Waits until the received text contains `needle`; false after `seconds`.
    @discardableResult
    func waitFor(_ needle: String, seconds: Double = 5) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if text.contains(needle) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return text.contains(needle)
    }

    /// Waits until the text holds any of `needles` or the connection closes, checking every
    /// millisecond (for loops of many short requests); whether one arrived.
    @discardableResult
    func waitForAny(_ needles: [String], seconds: Double = 10) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        func arrived() -> Bool {
            let text = self.text
            return needles.contains { text.contains($0) }
        }
        while ContinuousClock.now < deadline, !isClosed, !arrived() {
            try? await Task.sleep(for: .milliseconds(1))
        }
        return arrived()
    }

    func forget() { collector.received.withLockedValue { $0 = [] } }

    func close() async { try? await channel.close() }

    /// Opens a WebSocket at `path` offering `subprotocol`.
    static func webSocket(
        port: Int, group: any EventLoopGroup, path: String = "/lightstreamer",
        subprotocol: String? = "TLCP-2.5.0.lightstreamer.com"
    ) async throws -> RawTestConnection {
        let c = try await connect(port: port, group: group)
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        request += "\r\n"
        try await c.send(request)
        return c
    }

    /// Sends an HTTP POST and returns the connection (the response accumulates in `text`).
    static func post(
        port: Int, group: any EventLoopGroup, path: String, body: String,
        contentType: String = "text/plain; charset=utf-8"
    ) async throws -> RawTestConnection {
        let c = try await connect(port: port, group: group)
        try await c.send(
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: \(contentType)\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        return c
    }
}
