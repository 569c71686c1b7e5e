import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A loopback server that speaks just enough TLCP, over HTTP-STREAMING or over WebSocket, for
/// tests of what the real client does with lines no well-behaved server sends. Every request is
/// answered by `script`.
///
/// - Over HTTP, the lines it returns for a `bind_session` open the session's stream, which the
///   script may write to later through `stream` (lines written before it opens wait for it: a
///   client may send its control requests while its bind is on its way).
/// - Over WebSocket, `wsok` is answered by the server itself; the connection of the last
///   `create_session` or `bind_session` is the stream, whatever `open` says, and a request's
///   reply goes out before the lines the script sent to the stream while answering it. Plain
///   HTTP requests (the client recovers a session with an HTTP poll) get the script's lines
///   in a whole response.
final class ScriptedTLCPServer: Sendable {
    enum Transport: Sendable {
        case httpStreaming
        case webSocket
    }

    /// One request: its path with the query (over WebSocket, the request's name) and its
    /// requests, one per line, as parameter dictionaries.
    struct Request: Sendable {
        let path: String
        let requests: [[String: String]]
    }

    /// What the script answers: lines in a chunked response, which stays open as the stream
    /// when `open` is true.
    struct Reply: Sendable {
        let lines: [String]
        let open: Bool
    }

    private let channel: any Channel
    private let streamBox: NIOLockedValueBox<StreamState>

    var port: Int { channel.localAddress?.port ?? 0 }

    /// The session's stream, once a reply opened it.
    var stream: Stream { Stream(box: streamBox) }

    private init(channel: any Channel, stream: NIOLockedValueBox<StreamState>) {
        self.channel = channel
        self.streamBox = stream
    }

    static func start(
        group: any EventLoopGroup, transport: Transport = .httpStreaming,
        script: @escaping @Sendable (Request, ScriptedTLCPServer.Stream) -> Reply
    ) async throws -> ScriptedTLCPServer {
        let stream = NIOLockedValueBox(StreamState())
        let scripted = Scripted(stream: stream, script: script)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                switch transport {
                case .httpStreaming:
                    return child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.addHandler(Handler(scripted))
                    }
                case .webSocket:
                    return WebSocketHandler.configure(child, scripted)
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ScriptedTLCPServer(channel: channel, stream: stream)
    }

    func stop() async {
        if let stream = streamBox.withLockedValue({ $0.channel }) { try? await stream.close() }
        try? await channel.close()
    }

    /// The stream's channel once a reply opened it, and the lines written before (or, over
    /// WebSocket, while a request is being answered).
    fileprivate struct StreamState: Sendable {
        var channel: (any Channel)?
        var isWebSocket = false
        var answering = false
        var waiting: [String] = []
    }

    /// The script, and the stream it writes to: what each connection's handler answers with.
    fileprivate struct Scripted: Sendable {
        let stream: NIOLockedValueBox<StreamState>
        let script: @Sendable (Request, ScriptedTLCPServer.Stream) -> Reply

        func answer(_ request: Request) -> Reply { script(request, Stream(box: stream)) }
    }

    /// The session's stream, for lines sent after the request that opened it.
    struct Stream: Sendable {
        fileprivate let box: NIOLockedValueBox<StreamState>

        /// Writes `lines` as one chunk (one WebSocket message) on the stream, or keeps them
        /// for when it opens.
        func send(_ lines: [String]) {
            let (channel, isWebSocket) = box.withLockedValue { state -> ((any Channel)?, Bool) in
                guard let channel = state.channel, !state.answering else {
                    state.waiting += lines
                    return (nil, false)
                }
                return (channel, state.isWebSocket)
            }
            guard let channel else { return }
            if isWebSocket {
                channel.writeAndFlush(WebSocketHandler.message(lines), promise: nil)
            } else {
                channel.writeAndFlush(Handler.chunk(lines), promise: nil)
            }
        }

        /// Over HTTP, writes `text` as one chunk on the open stream with no line end after it
        /// (a line that has not ended yet); false when no HTTP stream is open.
        @discardableResult
        func send(unterminated text: String) -> Bool {
            guard let channel = box.withLockedValue({ $0.isWebSocket ? nil : $0.channel }) else { return false }
            channel.writeAndFlush(Handler.chunk(text: text), promise: nil)
            return true
        }

        /// Over WebSocket, writes `text` as one frame of a text message: its first frame when
        /// `first`, a continuation otherwise, the last when `fin`; false when no WebSocket
        /// stream is open.
        @discardableResult
        func send(frame text: String, first: Bool, fin: Bool) -> Bool {
            guard let channel = box.withLockedValue({ $0.isWebSocket ? $0.channel : nil }) else { return false }
            let frame = WebSocketFrame(fin: fin, opcode: first ? .text : .continuation, data: ByteBuffer(string: text))
            channel.writeAndFlush(frame, promise: nil)
            return true
        }
    }

    /// TLCP over WebSocket: each text message is one request name and its requests' lines;
    /// each reply goes out as one message.
    private final class WebSocketHandler: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame
        let scripted: Scripted
        var message: [UInt8] = []

        init(_ scripted: Scripted) { self.scripted = scripted }

        /// An HTTP server that upgrades to WebSocket with TLCP's subprotocol, and answers
        /// plain requests (the client's recovery polls) with the script's lines.
        static func configure(
            _ channel: any Channel, _ scripted: Scripted
        ) -> EventLoopFuture<Void> {
            let polls = NIOLoopBound(PollHandler(scripted), eventLoop: channel.eventLoop)
            let upgrader = NIOWebSocketServerUpgrader(
                maxFrameSize: 1 << 20,
                shouldUpgrade: { channel, _ in
                    channel.eventLoop.makeSucceededFuture(HTTPHeaders([("Sec-WebSocket-Protocol", "TLCP-2.5.0.lightstreamer.com")]))
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        channel.pipeline.syncOperations.removeHandler(polls.value, promise: nil)
                        try channel.pipeline.syncOperations.addHandler(WebSocketHandler(scripted))
                    }
                })
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                    withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                try channel.pipeline.syncOperations.addHandler(polls.value)
            }
        }

        static func message(_ lines: [String]) -> WebSocketFrame {
            WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: lines.map { $0 + "\r\n" }.joined()))
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text, .continuation:
                if frame.opcode == .text { message = [] }
                message.append(contentsOf: frame.unmaskedData.readableBytesView)
                guard frame.fin else { return }
                let lines = String(decoding: message, as: UTF8.self).split(separator: "\r\n")
                guard let name = lines.first else { return }
                if name == "wsok" {
                    context.writeAndFlush(wrapOutboundOut(Self.message(["WSOK"])), promise: nil)
                    return
                }
                let request = Request(path: String(name), requests: lines.dropFirst().map(Handler.parameters))
                let isStream = name == "create_session" || name == "bind_session"
                scripted.stream.withLockedValue { state in
                    if isStream {
                        state.channel = context.channel
                        state.isWebSocket = true
                    }
                    state.answering = true
                }
                let reply = scripted.answer(request)
                // The lines sent while answering, now that the reply is on its way (kept when
                // no stream is open yet).
                let (held, streamChannel) = scripted.stream.withLockedValue { state -> ([String], (any Channel)?) in
                    state.answering = false
                    guard let channel = state.channel else { return ([], nil) }
                    defer { state.waiting = [] }
                    return (state.waiting, channel)
                }
                context.writeAndFlush(wrapOutboundOut(Self.message(reply.lines)), promise: nil)
                if !held.isEmpty { streamChannel?.writeAndFlush(Self.message(held), promise: nil) }
            case .connectionClose:
                context.close(promise: nil)
            default:
                break
            }
        }
    }

    /// Plain HTTP requests beside the WebSocket transport: each answered with the script's
    /// lines in one whole response (never a stream: lines for the stream go to the WebSocket).
    private final class PollHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let scripted: Scripted
        var path = ""
        var body: [UInt8] = []

        init(_ scripted: Scripted) { self.scripted = scripted }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                path = head.uri
                body = []
            case .body(let bytes):
                body.append(contentsOf: bytes.readableBytesView)
            case .end:
                let lines = String(decoding: body, as: UTF8.self).split(separator: "\r\n")
                let reply = scripted.answer(Request(path: path, requests: lines.map(Handler.parameters)))
                let text = reply.lines.map { $0 + "\r\n" }.joined()
                var headers = HTTPHeaders([("Content-Type", "text/enriched; charset=UTF-8")])
                headers.add(name: "Content-Length", value: String(text.utf8.count))
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }

    /// Reads HTTP/1.1 requests with a `Content-Length` body, one after the other, and answers
    /// each with the script's lines.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let scripted: Scripted
        var pending: [UInt8] = []

        init(_ scripted: Scripted) { self.scripted = scripted }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            pending.append(contentsOf: unwrapInboundIn(data).readableBytesView)
            while let (request, used) = Self.request(in: pending) {
                pending.removeFirst(used)
                let reply = scripted.answer(request)
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/enriched; charset=UTF-8\r\nTransfer-Encoding: chunked\r\n\r\n"
                var out = context.channel.allocator.buffer(string: head)
                var lines = reply.lines
                if reply.open {
                    scripted.stream.withLockedValue { state in
                        state.channel = context.channel
                        lines += state.waiting
                        state.waiting = []
                    }
                }
                var body = Self.chunk(lines)
                out.writeBuffer(&body)
                if !reply.open {
                    out.writeString("0\r\n\r\n")
                }
                context.writeAndFlush(wrapOutboundOut(out), promise: nil)
            }
        }

        static func chunk(_ lines: [String]) -> ByteBuffer {
            chunk(text: lines.map { $0 + "\r\n" }.joined())
        }

        /// `text` as one chunk of a chunked body (nothing when it is empty: an empty chunk
        /// ends the body).
        static func chunk(text: String) -> ByteBuffer {
            var buffer = ByteBuffer()
            guard !text.isEmpty else { return buffer }
            buffer.writeString(String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n")
            return buffer
        }

        /// The first whole request in `bytes` and how many bytes it takes, or nil while it is
        /// incomplete.
        static func request(in bytes: [UInt8]) -> (Request, Int)? {
            let separator: [UInt8] = Array("\r\n\r\n".utf8)
            guard let headEnd = bytes.indices.dropLast(3).first(where: { bytes[$0..<($0 + 4)].elementsEqual(separator) }) else {
                return nil
            }
            let head = String(decoding: bytes[..<headEnd], as: UTF8.self).split(separator: "\r\n")
            let path = head.first?.split(separator: " ").dropFirst().first.map(String.init) ?? ""
            let length =
                head.dropFirst().compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 0
            let bodyStart = headEnd + 4
            guard bytes.count - bodyStart >= length else { return nil }
            let body = String(decoding: bytes[bodyStart..<(bodyStart + length)], as: UTF8.self)
            let requests = body.split(separator: "\r\n").map(parameters)
            return (Request(path: path, requests: requests), bodyStart + length)
        }

        /// One request's `name=value&…` line as a dictionary (the first of a repeated name).
        static func parameters(_ line: Substring) -> [String: String] {
            Dictionary(
                line.split(separator: "&").map { pair -> (String, String) in
                    let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                    return (kv[0], kv.count > 1 ? kv[1] : "")
                }, uniquingKeysWith: { first, _ in first })
        }
    }
}
