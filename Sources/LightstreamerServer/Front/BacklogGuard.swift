import NIOCore

/// The byte bound on what a connection holds for a client that does not read: the channel's
/// unsent bytes plus what is about to be written. Past `SessionSettings.maxBacklogBytes` the
/// connection is closed (its session loses the stream and may recover on a new one, within its
/// own bound) instead of the server's memory growing with the client's slowness.
enum BacklogGuard {
    /// Whether writing `incoming` more bytes on `channel` would pass `limit`. Called on the
    /// channel's event loop.
    static func wouldExceed(_ channel: any Channel, incoming: Int, limit: Int) -> Bool {
        guard incoming > 0 else { return false }
        // A writable channel holds at most its high water mark (the server keeps NIO's
        // default): no need to ask for the exact count, which costs more than the write.
        if channel.isWritable && incoming <= limit - Self.defaultHighWaterMark { return false }
        guard let options = channel.syncOptions,
            let buffered = try? options.getOption(ChannelOptions.bufferedWritableBytes)
        else { return false }
        return buffered + incoming > limit
    }

    /// NIO's default `WriteBufferWaterMark.high`; no channel of the server sets another.
    static let defaultHighWaterMark = 64 * 1024

    /// Bytes of text `ops` would write.
    static func bytes(of ops: [OutboundQueue.Op]) -> Int {
        var n = 0
        for op in ops {
            switch op {
            case .text(let t): n += t.utf8.count
            case .reply(_, let line?): n += line.utf8.count + 2
            case .reply, .end: break
            }
        }
        return n
    }
}
