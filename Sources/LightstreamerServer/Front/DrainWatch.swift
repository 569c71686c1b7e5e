import NIOCore

/// Write-side backpressure for one connection. While the channel is not writable (what is
/// queued for the socket is over NIO's high water mark: the client reads slower than the
/// server writes) the connection stops reading requests; if it stays so for `limitMillis`
/// (`SessionSettings.maxUndrainedMillis`, passed on each change rather than kept: 8 bytes of
/// every connection's handler), it is closed. The session then waits unbound as after any dropped connection, and the client may
/// come back with `LS_recovery_from` while the recovery window holds its data.
///
/// Event-loop only: owned by a channel handler.
struct DrainWatch {
    private var timer: Scheduled<Void>?

    /// Call from `channelWritabilityChanged`. `onStuck` runs on the loop when the channel has
    /// stayed unwritable for `limitMillis` (0 or less: never).
    mutating func writabilityChanged(context: ChannelHandlerContext, limitMillis: Int, onStuck: @escaping () -> Void) {
        let channel = context.channel
        if channel.isWritable {
            timer?.cancel()
            timer = nil
            try? channel.syncOptions?.setOption(.autoRead, value: true)
        } else if timer == nil {
            try? channel.syncOptions?.setOption(.autoRead, value: false)
            guard limitMillis > 0 else { return }
            let stuck = NIOLoopBound(onStuck, eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(in: .milliseconds(Int64(limitMillis))) {
                guard !channel.isWritable else { return }
                stuck.value()
            }
        }
    }

    mutating func cancel() {
        timer?.cancel()
        timer = nil
    }
}
