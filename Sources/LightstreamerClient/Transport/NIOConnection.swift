import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket

enum NIOConnectionError: Error { case tlsUnavailable, certificatePinMismatch }

/// One connection: reports exactly one terminal event (closed or failed) and nothing after a
/// local close.
final class NIOConnection: TransportConnection, Sendable {
    private struct State {
        var channel: Channel?
        var finished = false
        var closeRequested = false
    }

    private let state = NIOLockedValueBox(State())
    private let events: @Sendable (TransportEvent) -> Void

    init(events: @escaping @Sendable (TransportEvent) -> Void) {
        self.events = events
    }

    func attach(_ future: EventLoopFuture<Channel>) {
        future.whenComplete { result in
            switch result {
            case .success(let ch):
                let close: Bool = self.state.withLockedValue { s in
                    s.channel = ch
                    return s.closeRequested
                }
                if close { ch.close(promise: nil) }
            case .failure(let error):
                self.fail("\(error)")
            }
        }
    }

    /// Events from the pipeline.
    func emit(_ e: TransportEvent) {
        let pass: Bool = state.withLockedValue { s in
            guard !s.finished, !s.closeRequested else { return false }
            switch e {
            case .closed, .failed, .rejected: s.finished = true
            default: break
            }
            return true
        }
        if pass { events(e) }
    }

    func fail(_ reason: String) { emit(.failed(reason)) }
    func reject(code: Int, message: String) { emit(.rejected(code: code, message: message)) }
    func upgraded() { emit(.opened) }

    func send(_ text: String) {
        guard let ch = state.withLockedValue({ $0.channel }) else { return }
        ch.eventLoop.execute {
            var buffer = ch.allocator.buffer(capacity: text.utf8.count)
            buffer.writeString(text)
            let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)
            ch.writeAndFlush(frame, promise: nil)
        }
    }

    func abort() {
        state.withLockedValue { $0.channel }?.close(promise: nil)
    }

    func close() {
        let ch: Channel? = state.withLockedValue { s in
            s.closeRequested = true
            return s.channel
        }
        ch?.close(promise: nil)
    }
}
