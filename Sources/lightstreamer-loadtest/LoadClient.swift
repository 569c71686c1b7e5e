import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Shared tallies of all load clients.
final class LoadStats: Sendable {
    struct State {
        var updates = 0
        var recording = false
        var latenciesMicros: [Int] = []
        var sampleEvery = 1
        var sampleCounter = 0
        var subscribed = 0
        var errors = 0
    }

    let state = NIOLockedValueBox(State())

    func record(updates: Int, latencies: [Int]) {
        state.withLockedValue { s in
            guard s.recording else { return }
            s.updates += updates
            for l in latencies {
                s.sampleCounter += 1
                if s.sampleCounter % s.sampleEvery == 0 { s.latenciesMicros.append(l) }
            }
        }
    }
}

/// One WebSocket TLCP session, minimal: handshake, `wsok`, create, one `add`, then it reads
/// frames, counts `U` lines and measures latency from the `ts` value (same clock, same process).
final class LoadClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let items: [String]
    let stats: LoadStats
    let subscribe: Bool
    let adapterSet: String
    private var handshakeDone = false
    private var buffer = ByteBuffer()
    private var pendingUpdates = 0
    private var pendingLatencies: [Int] = []

    init(items: [String], stats: LoadStats, subscribe: Bool, adapterSet: String = "LOAD") {
        self.items = items
        self.stats = stats
        self.subscribe = subscribe
        self.adapterSet = adapterSet
    }

    func channelActive(context: ChannelHandlerContext) {
        let request =
            "GET /lightstreamer HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: TLCP-2.5.0.lightstreamer.com\r\n\r\n"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: request)), promise: nil)
    }

    private func sendText(_ text: String, context: ChannelHandlerContext) {
        let payload = Array(text.utf8)
        var frame = ByteBuffer()
        frame.writeInteger(UInt8(0x81))
        if payload.count < 126 {
            frame.writeInteger(UInt8(0x80 | payload.count))
        } else {
            frame.writeInteger(UInt8(0x80 | 126))
            frame.writeInteger(UInt16(payload.count))
        }
        let mask: [UInt8] = [1, 2, 3, 4]
        frame.writeBytes(mask)
        frame.writeBytes(payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
        context.write(wrapOutboundOut(frame), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        buffer.writeBuffer(&incoming)
        if !handshakeDone {
            let view = buffer.readableBytesView
            guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            buffer.moveReaderIndex(forwardBy: view.distance(from: view.startIndex, to: end.upperBound))
            handshakeDone = true
            sendText("wsok", context: context)
            sendText(
                "create_session\r\nLS_cid=mgQkwtwdysogQz2BJ4Ji%20kOj2Bg&LS_adapter_set=\(adapterSet)&LS_send_sync=false", context: context)
            if subscribe {
                let group = items.joined(separator: "%20")
                sendText(
                    "control\r\nLS_reqId=1&LS_op=add&LS_subId=1&LS_mode=MERGE&LS_group=\(group)&LS_schema=ts&LS_ack=false",
                    context: context)
            }
            context.flush()
        }
        readFrames()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if pendingUpdates > 0 {
            stats.record(updates: pendingUpdates, latencies: pendingLatencies)
            pendingUpdates = 0
            pendingLatencies.removeAll(keepingCapacity: true)
        }
    }

    private func readFrames() {
        while buffer.readableBytes >= 2 {
            let start = buffer.readerIndex
            guard let b1: UInt8 = buffer.getInteger(at: start + 1) else { return }
            var length = Int(b1 & 0x7F)
            var header = 2
            if length == 126 {
                guard let l: UInt16 = buffer.getInteger(at: start + 2) else { return }
                length = Int(l)
                header = 4
            } else if length == 127 {
                guard let l: UInt64 = buffer.getInteger(at: start + 2) else { return }
                length = Int(l)
                header = 10
            }
            guard buffer.readableBytes >= header + length else { return }
            let payload = buffer.getSlice(at: start + header, length: length) ?? ByteBuffer()
            buffer.moveReaderIndex(forwardBy: header + length)
            handlePayload(payload)
        }
        buffer.discardReadBytes()
    }

    private func handlePayload(_ payload: ByteBuffer) {
        let now = Int(NIODeadline.now().uptimeNanoseconds)
        let view = payload.readableBytesView
        var lineStart = view.startIndex
        var i = view.startIndex
        while i < view.endIndex {
            if view[i] == UInt8(ascii: "\n") {
                let line = view[lineStart..<i]
                if line.first == UInt8(ascii: "U"), line.count > 2, line[line.index(after: line.startIndex)] == UInt8(ascii: ",") {
                    pendingUpdates += 1
                    // The last comma-separated token is the ts value.
                    var ts = 0
                    var j = line.endIndex
                    while j > line.startIndex {
                        let c = line[line.index(before: j)]
                        if c == UInt8(ascii: ",") || c == UInt8(ascii: "|") { break }
                        j = line.index(before: j)
                    }
                    for c in line[j...] where c >= 0x30 && c <= 0x39 { ts = ts * 10 + Int(c - 0x30) }
                    if ts > 0 { pendingLatencies.append((now - ts) / 1000) }
                } else if line.starts(with: Array("SUBOK".utf8)) {
                    stats.state.withLockedValue { $0.subscribed += 1 }
                } else if line.starts(with: Array("CONOK".utf8)), !subscribe {
                    stats.state.withLockedValue { $0.subscribed += 1 }
                } else if line.starts(with: Array("CONERR".utf8)) || line.starts(with: Array("REQERR".utf8))
                    || line.starts(with: Array("END".utf8))
                {
                    stats.state.withLockedValue { $0.errors += 1 }
                }
                lineStart = view.index(after: i)
            }
            i = view.index(after: i)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        stats.state.withLockedValue { $0.errors += 1 }
        context.close(promise: nil)
    }
}
