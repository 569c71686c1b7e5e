import NIOCore
import NIOHTTP1

/// One HTTP response carrying TLCP lines: a stream (create/bind, ended by `endStream`) or the
/// answers to a batch of controls/messages/heartbeats (ended once every line is answered).
/// The body is sent chunked, line by line as it is produced.
final class HTTPResponseOutbound: OutboundConnection {
    enum Kind: Sendable {
        case stream
        case batch(lines: Int)
    }

    let connectionID: ConnectionID
    var transport: TransportKind { .http }
    let queue: OutboundQueue

    init(connectionID: ConnectionID, queue: OutboundQueue) {
        self.connectionID = connectionID
        self.queue = queue
    }

    func send(_ text: String) { queue.push(.text(text)) }
    func endStream(closeSocket: Bool) { queue.push(.end(closeSocket: closeSocket)) }
    func send(_ text: String, thenEndStream closeSocket: Bool) { queue.push(.text(text), .end(closeSocket: closeSocket)) }
    func reply(index: Int, line: String?) { queue.push(.reply(index: index, line: line)) }
}

/// The event-loop side of an `HTTPResponseOutbound`: writes the head, the chunks and the end.
struct HTTPResponseWriter {
    let kind: HTTPResponseOutbound.Kind
    let keepAlive: Bool
    var headSent = false
    var ended = false
    var answered: Set<Int> = []

    init(kind: HTTPResponseOutbound.Kind, keepAlive: Bool) {
        self.kind = kind
        self.keepAlive = keepAlive
    }

    static func head(stream: Bool, keepAlive: Bool, contentLength: Int? = nil) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: stream ? "text/enriched; charset=UTF-8" : "text/plain; charset=UTF-8")
        headers.add(name: "Cache-Control", value: "no-store, no-cache, no-transform")
        headers.add(name: "Pragma", value: "no-cache")
        headers.add(name: "Expires", value: "Thu, 01 Jan 1970 00:00:00 GMT")
        if let contentLength {
            headers.add(name: "Content-Length", value: String(contentLength))
        } else {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        }
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        return HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
    }

    /// Applies queued operations. Returns whether the response ended, and whether to close.
    mutating func apply(_ ops: [OutboundQueue.Op], write: (HTTPServerResponsePart) -> Void) -> (ended: Bool, close: Bool) {
        guard !ended else { return (false, false) }
        var close = false
        func ensureHead() {
            if !headSent {
                headSent = true
                let isStream: Bool
                if case .stream = kind { isStream = true } else { isStream = false }
                write(.head(Self.head(stream: isStream, keepAlive: keepAlive)))
            }
        }
        for op in ops {
            guard !ended else { break }
            switch op {
            case .text(let text):
                ensureHead()
                write(.body(.byteBuffer(ByteBuffer(string: text))))
            case .reply(let index, let line):
                ensureHead()
                if let line { write(.body(.byteBuffer(ByteBuffer(string: line + "\r\n")))) }
                answered.insert(index)
                if case .batch(let count) = kind, answered.count >= count {
                    ended = true
                }
            case .end(let closeSocket):
                ensureHead()
                ended = true
                close = closeSocket
            }
        }
        if ended {
            write(.end(nil))
            return (true, close || !keepAlive)
        }
        return (false, false)
    }
}
