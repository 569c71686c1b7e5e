import Foundation
import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// `--remote-feed-port`: a minimal remote Data Adapter (the role of a Remote Adapter SDK, no
/// SDK): connects to the server's remote data port, sends `RAC`, answers `DPI` (1.9.1), `SUB`
/// (then `EOS`: no snapshot) and `USB`, and writes `UD3` updates of fields `n` and `ts` (the
/// monotonic clock in ns, as the load clients expect) round-robin over the subscribed items,
/// as fast as the socket takes them or at `rate` updates/s in total. Lines are written in
/// batches of up to 64 KB per `write`, as a buffering SDK would. Blocking POSIX I/O on two
/// threads (reader, writer): nothing to share with the server's event loops.
/// `@unchecked Sendable`: its mutable state is in `feed`, a lock box; the rest are `let`s.
final class RemoteFeedGenerator: @unchecked Sendable {
    let port: Int
    /// Total updates per second; 0: as fast as possible.
    let rate: Double
    private let fd: Int32
    private struct Feed {
        var items: [(name: String, subId: String)] = []
        var replies: [String] = []
        var closed = false
    }
    private let feed = NIOLockedValueBox(Feed())

    init(port: Int, rate: Double) throws {
        self.port = port
        self.rate = rate
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RemoteBenchError(description: "socket: errno \(errno)") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { throw RemoteBenchError(description: "connect to 127.0.0.1:\(port): errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Runs until the server closes the connection.
    func run() {
        // The parent may hand down a mask that blocks SIGTERM: unblock it, so that it ends this process.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGTERM)
        sigaddset(&unblock, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        writeAll(Array("1|RAC|S|enableClosePacket|S|true|S|SDK|S|Swift%20load%20generator\r\n".utf8))
        let reader = Thread { [self] in readLoop() }
        reader.start()
        writeLoop()
    }

    private func writeAll(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 {
                if n < 0, errno == EINTR { continue }
                feed.withLockedValue { $0.closed = true }
                return
            }
            offset += n
        }
    }

    /// Reads the server's requests (lines of at most 64 KB; longer ones are dropped).
    private func readLoop() {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            pending.append(contentsOf: chunk[0..<n])
            while let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                pending.removeSubrange(...nl)
                handle(line)
            }
            if pending.count > 65_536 { pending.removeAll() }
        }
        feed.withLockedValue { $0.closed = true }
    }

    private func handle(_ line: String) {
        let t = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard t.count >= 2 else { return }
        let (id, method) = (t[0], t[1])
        feed.withLockedValue { f in
            switch method {
            case "DPI":
                f.replies.append("\(id)|DPI|S|ARI.version|S|1.9.1")
            case "SUB" where t.count >= 4:
                let item = t[3].removingPercentEncoding ?? t[3]
                f.replies.append("\(id)|SUB|V")
                f.replies.append("\(Int(Date().timeIntervalSince1970 * 1000))|EOS|S|\(t[3])|S|\(id)")
                f.items.append((item, id))
            case "USB" where t.count >= 4:
                let item = t[3].removingPercentEncoding ?? t[3]
                f.items.removeAll { $0.name == item }
                f.replies.append("\(id)|USB|V")
            case "CLOSE":
                f.closed = true
            default:
                break
            }
        }
    }

    private func writeLoop() {
        var n = 0
        var sent = 0.0
        let start = NIODeadline.now()
        var batch: [UInt8] = []
        batch.reserveCapacity(70_000)
        var next = 0
        while true {
            let (items, replies, closed) = feed.withLockedValue { f -> ([(name: String, subId: String)], [String], Bool) in
                defer { f.replies.removeAll() }
                return (f.items, f.replies, f.closed)
            }
            if closed { return }
            for r in replies { batch.append(contentsOf: Array((r + "\r\n").utf8)) }
            var due = items.isEmpty ? 0 : 256
            if rate > 0, !items.isEmpty {
                let elapsed = Double((NIODeadline.now() - start).nanoseconds) / 1e9
                due = max(0, min(256, Int(rate * elapsed - sent)))
            }
            for _ in 0..<due {
                let item = items[next % items.count]
                next &+= 1
                n &+= 1
                let ts = NIODeadline.now().uptimeNanoseconds
                batch.append(contentsOf: Array("\(ts)|UD3|S|\(item.name)|S|\(item.subId)|B|0|S|n|S|\(n)|S|ts|S|\(ts)\r\n".utf8))
                if batch.count >= 65_536 {
                    writeAll(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            sent += Double(due)
            if !batch.isEmpty {
                writeAll(batch)
                batch.removeAll(keepingCapacity: true)
            }
            if due == 0 { usleep(items.isEmpty ? 10_000 : 500) }
        }
    }
}
