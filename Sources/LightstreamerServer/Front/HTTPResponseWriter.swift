import NIOCore
import NIOHTTP1

/// One HTTP response carrying TLCP lines, on the event loop's side (sessions write to it
/// through an `OutboundQueue` of transport `.http`): a stream (create/bind, ended by
/// `endStream`) or the answers to a batch of controls/messages/heartbeats (ended once every
/// line is answered). It writes the head, then the body chunked, line by line as it is
/// produced, then the end.
struct HTTPResponseWriter {
    enum Kind: Sendable {
        case stream
        case batch(lines: Int)
    }

    let kind: Kind
    let keepAlive: Bool
    var headSent = false
    var ended = false
    var answered: Set<Int> = []

    init(kind: Kind, keepAlive: Bool) {
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
