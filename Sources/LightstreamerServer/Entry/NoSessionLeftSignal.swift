import NIOConcurrencyHelpers

/// Tells every watcher each time a closed session leaves no session behind: what
/// `LightstreamerServer.drain` waits for. Each watcher has a stream of its own, so several
/// drains may wait at once.
final class NoSessionLeftSignal: Sendable {
    private struct Watchers {
        var nextId = 0
        var streams: [Int: AsyncStream<Void>.Continuation] = [:]
    }

    private let watchers = NIOLockedValueBox(Watchers())

    /// Wakes every watcher (called with no session left).
    func signal() {
        for continuation in watchers.withLockedValue({ Array($0.streams.values) }) { continuation.yield() }
    }

    /// A stream that yields after each signal from now on (signals not yet read fold into one),
    /// until its continuation is finished (the watcher is then forgotten).
    func watch() -> (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = watchers.withLockedValue { w in
            defer { w.nextId += 1 }
            w.streams[w.nextId] = continuation
            return w.nextId
        }
        continuation.onTermination = { [weak self] _ in
            self?.watchers.withLockedValue { _ = $0.streams.removeValue(forKey: id) }
        }
        return (stream, continuation)
    }
}
