import NIOCore

/// Finds when a session is bound on a WebSocket (the server's `CONOK`, which answers both
/// `create_session` and `bind_session`, goes out) and when it no longer is (`LOOP` or `END`),
/// for the WebSocket's session timeout (`ConnectionPhases.Limits.webSocketSessionMillis`),
/// which `WebSocketTLCPHandler` runs once the upgrade has taken `ConnectionTimeoutHandler` out
/// of the pipeline. A text frame may carry several lines: before a session, every line is
/// looked at (few, short frames); with one, only the last line of each frame, as nothing
/// follows `LOOP` or `END` on a stream, so the frames of updates cost a look at their tail.
///
/// A value inside the handler, told of each text frame it writes: as a pipeline handler,
/// every hop would cost each write a few retains.
struct WebSocketSessionObserver {
    enum Change: Equatable {
        /// A session is now bound: no timeout.
        case bound
        /// The session ended or asked to be rebound: the timeout starts again.
        case unbound
    }

    private(set) var bound = false
    private static let conok = Array("CONOK,".utf8)
    private static let loop = Array("LOOP,".utf8)
    private static let end = Array("END,".utf8)

    /// A text frame with `bytes` is being written; returns the change it makes, if any. A frame
    /// that binds a session and ends it too (`CONOK` … `LOOP`) counts as `unbound`.
    mutating func textWritten(_ bytes: ByteBufferView) -> Change? {
        var change: Change?
        if !bound, Self.someLine(of: bytes, startsWith: Self.conok) {
            bound = true
            change = .bound
        }
        if bound, Self.lastLineEndsStream(bytes) {
            bound = false
            change = .unbound
        }
        return change
    }
}

extension WebSocketSessionObserver {
    static func someLine(of bytes: ByteBufferView, startsWith prefix: [UInt8]) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index...].starts(with: prefix) { return true }
            guard let lf = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) else { return false }
            index = bytes.index(after: lf)
        }
        return false
    }

    /// The last line of `bytes`, its line end (and a final line end) left out. Found on the
    /// frame's contiguous bytes (`lastLineRange`): every frame of updates costs this scan, and
    /// through the view's indices it was some 0.4 % of the server's CPU at 1,000 sessions.
    static func lastLine(of bytes: ByteBufferView) -> ByteBufferView {
        let range = bytes.withContiguousStorageIfAvailable(lastLineRange) ?? Array(bytes).withUnsafeBufferPointer(lastLineRange)
        let start = bytes.index(bytes.startIndex, offsetBy: range.lowerBound)
        return bytes[start..<bytes.index(start, offsetBy: range.count)]
    }

    /// Whether the last line of `bytes` is a `LOOP` or an `END`.
    static func lastLineEndsStream(_ bytes: ByteBufferView) -> Bool {
        let last = lastLine(of: bytes)
        return last.starts(with: loop) || last.starts(with: end)
    }

    /// Where the last line of `p` is, its line end (and a final line end) left out.
    static func lastLineRange(_ p: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var end = p.count
        while end > 0, p[end - 1] == UInt8(ascii: "\n") || p[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        var start = end
        while start > 0, p[start - 1] != UInt8(ascii: "\n") { start -= 1 }
        return start..<end
    }
}
