import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A loopback HTTP server that speaks just enough TLCP over HTTP-STREAMING for tests of what
/// the real client does with lines no well-behaved server sends. Every request is answered by
/// `script`; the lines it returns for a `bind_session` open the session's stream, which the
/// script may write to later through `stream` (lines written before it opens wait for it: a
/// client may send its control requests while its bind is on its way).
final class ScriptedTLCPServer: Sendable {
    /// One request: its path (with the query) and its body's requests, one per line, as
    /// parameter dictionaries.
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
        group: any EventLoopGroup, script: @escaping @Sendable (Request, ScriptedTLCPServer.Stream) -> Reply
    ) async throws -> ScriptedTLCPServer {
        let stream = NIOLockedValueBox(StreamState())
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(Handler(stream: stream, script: script))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ScriptedTLCPServer(channel: channel, stream: stream)
    }

    func stop() async {
        if let stream = streamBox.withLockedValue({ $0.channel }) { try? await stream.close() }
        try? await channel.close()
    }

    /// The stream's channel once a reply opened it, and the lines written before.
    fileprivate struct StreamState: Sendable {
        var channel: (any Channel)?
        var waiting: [String] = []
    }

    /// The session's stream, for lines sent after the request that opened it.
    struct Stream: Sendable {
        fileprivate let box: NIOLockedValueBox<StreamState>

        /// Writes `lines` as one chunk on the stream, or keeps them for when it opens.
        func send(_ lines: [String]) {
            let channel = box.withLockedValue { state in
                if state.channel == nil { state.waiting += lines }
                return state.channel
            }
            channel?.writeAndFlush(Handler.chunk(lines), promise: nil)
        }

        /// Writes `text` as one chunk on the open stream with no line end after it (a line
        /// that has not ended yet); false when no stream is open.
        @discardableResult
        func send(unterminated text: String) -> Bool {
            guard let channel = box.withLockedValue({ $0.channel }) else { return false }
            channel.writeAndFlush(Handler.chunk(text: text), promise: nil)
            return true
        }
    }

    /// Reads HTTP/1.1 requests with a `Content-Length` body, one after the other, and answers
    /// each with the script's lines.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let stream: NIOLockedValueBox<StreamState>
        let script: @Sendable (Request, ScriptedTLCPServer.Stream) -> Reply
        var pending: [UInt8] = []

        init(stream: NIOLockedValueBox<StreamState>, script: @escaping @Sendable (Request, ScriptedTLCPServer.Stream) -> Reply) {
            self.stream = stream
            self.script = script
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            pending.append(contentsOf: unwrapInboundIn(data).readableBytesView)
            while let (request, used) = Self.request(in: pending) {
                pending.removeFirst(used)
                let reply = script(request, Stream(box: stream))
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/enriched; charset=UTF-8\r\nTransfer-Encoding: chunked\r\n\r\n"
                var out = context.channel.allocator.buffer(string: head)
                var lines = reply.lines
                if reply.open {
                    stream.withLockedValue { state in
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
            let requests = body.split(separator: "\r\n").map { line in
                Dictionary(
                    line.split(separator: "&").map { pair -> (String, String) in
                        let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                        return (kv[0], kv.count > 1 ? kv[1] : "")
                    }, uniquingKeysWith: { first, _ in first })
            }
            return (Request(path: path, requests: requests), bodyStart + length)
        }
    }
}
