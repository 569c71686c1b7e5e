import Logging
import NIOCore

/// What the front's two connection timeouts share: `ConnectionTimeoutHandler` (up to the
/// WebSocket upgrade, or for an HTTP connection's whole life) and the WebSocket's wait for a
/// session (`WebSocketTLCPHandler`). Both run on the channel's loop.
extension ChannelHandlerContext {
    /// Calls `fire` with `handler` and this context on the channel's loop once `millis` have
    /// passed (saturating), unless the returned task is cancelled first.
    func scheduleTimeout<Handler: AnyObject>(
        millis: Int, for handler: Handler, _ fire: @escaping @Sendable (Handler, ChannelHandlerContext) -> Void
    ) -> Scheduled<Void> {
        let bound = NIOLoopBound((handler, self), eventLoop: eventLoop)
        let delay = TimeAmount.nanoseconds(Saturating.nanoseconds(millis: Int64(millis)))
        return eventLoop.scheduleTask(in: delay) {
            let (handler, context) = bound.value
            fire(handler, context)
        }
    }

    /// Logs why the connection is closed (docs/METRICS.md, "Logs") and closes it.
    func closeForTimeout(_ reason: ConnectionPhases.Reason, logger: Logger) {
        logger.debug(
            "closing a connection",
            metadata: [
                "reason": "\(reason.rawValue)",
                "remote": "\(channel.remoteAddress?.description ?? "?")",
            ])
        close(promise: nil)
    }
}
