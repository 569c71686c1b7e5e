import NIOCore

/// The byte bound on what a connection holds for a client that does not read: the channel's
/// unsent bytes plus what is about to be written. Past `SessionSettings.maxBacklogBytes` the
/// connection is closed (its session loses the stream and may recover on a new one, within its
/// own bound) instead of the server's memory growing with the client's slowness.
enum BacklogGuard {
    /// Whether writing `incoming` more bytes on a channel would pass `limit`, given its
    /// writability; `buffered` gives the exact count of unsent bytes (asked only when
    /// writability cannot settle it). Called on the channel's event loop.
    static func wouldExceed(isWritable: Bool, incoming: Int, limit: Int, buffered: () -> Int?) -> Bool {
        guard incoming > 0 else { return false }
        // What is about to be written is over the limit by itself (`OutboundQueue` stops
        // taking text past it), whatever the channel holds or can tell.
        if incoming > limit { return true }
        // A writable channel holds at most its high water mark: no need to ask for the exact
        // count, which costs more than the write.
        if fits(incoming: incoming, isWritable: isWritable, limit: limit) { return false }
        guard let buffered = buffered() else { return false }
        return buffered + incoming > limit
    }

    /// Whether a write of `incoming` bytes is within `limit` without asking anything more: the
    /// channel is writable (so it holds at most its high water mark) and `incoming` fits below
    /// the limit beside that. Then `refusal` answers nil at once.
    static func fits(incoming: Int, isWritable: Bool, limit: Int) -> Bool {
        isWritable && incoming <= limit - Self.highWaterMark
    }

    /// Why a write must not happen: its connection's own bound, or all slow connections'.
    enum Refusal {
        /// Past `maxBacklogBytes`.
        case connection
        /// The `BacklogBudget` cannot take it (`maxTotalBacklogBytes`).
        case budget
    }

    /// Checks a write of `incoming` bytes against the connection's `limit` and, when the
    /// channel is not writable, against `budget` (setting `share` to what the channel then
    /// holds unsent plus `incoming`). `buffered` gives the channel's unsent bytes, asked at
    /// most once and only while it is not writable (a writable channel's write path touches
    /// no channel getter: BENCHMARKS.md, "The write path without the channel's getters").
    /// Nil: write. Called on the channel's event loop.
    static func refusal(
        incoming: Int, isWritable: Bool, limit: Int, share: inout BacklogBudgetShare, budget: BacklogBudget,
        buffered: () -> Int?
    ) -> Refusal? {
        if fits(incoming: incoming, isWritable: isWritable, limit: limit) { return nil }
        var asked: Int??
        let exceeds = wouldExceed(isWritable: isWritable, incoming: incoming, limit: limit) {
            let b = buffered()
            asked = b
            return b
        }
        if exceeds { return .connection }
        if !isWritable, !share.hold(((asked ?? buffered()) ?? 0) + incoming, in: budget) { return .budget }
        return nil
    }

    /// The bytes `channel` holds unsent (nil if it cannot tell). On the channel's event loop.
    static func bufferedBytes(of channel: any Channel) -> Int? {
        guard let options = channel.syncOptions else { return nil }
        return try? options.getOption(ChannelOptions.bufferedWritableBytes)
    }

    /// The client connections' `WriteBufferWaterMark.high` (`LightstreamerServer.writeBufferWaterMark`).
    static let highWaterMark = LightstreamerServer.writeBufferWaterMark.high

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
