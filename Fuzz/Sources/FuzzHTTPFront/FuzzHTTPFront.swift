import Foundation
import LightstreamerServer

#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer entry point: raw bytes into the server's real front door. One server (the DEMO
/// adapter set) runs in this process on a loopback port; each input is written on a new TCP
/// connection, the write side is closed, and the answer is read until the server closes. NIO's
/// HTTP decoder, the WebSocket upgrade, the TLCP HTTP handler, request parsing and the session
/// manager all see the bytes. A trap anywhere in them, or a server that stops answering (the
/// read times out after 5 s, past libFuzzer's `-timeout`), is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPFront(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let port = FrontUnderTest.port else { fatalError("the server under test did not start") }
    guard let fd = connectToServer(port: port) else { return 0 }
    defer { close(fd) }
    var sent = 0
    while sent < size {
        let n = send(fd, data + sent, size - sent, Int32(MSG_NOSIGNAL))
        if n <= 0 { break }
        sent += n
    }
    shutdown(fd, Int32(SHUT_WR))
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n > 0 { continue }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
            fatalError("the server kept a connection open 5 s after its client stopped sending")
        }
        break
    }
    return 0
}

/// A connected socket to the server, with 5 s send/receive timeouts. A connection refused means
/// the server stopped accepting: a finding. A connect interrupted by a signal (EINTR) is tried
/// again on a new socket; after three interruptions the input is skipped (nil).
func connectToServer(port: Int) -> Int32? {
    for _ in 0..<3 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected == 0 { return fd }
        let error = errno
        close(fd)
        if error == EINTR || error == EAGAIN { continue }
        fatalError("the server stopped accepting connections (errno \(error))")
    }
    return nil
}

/// The server the inputs go to, started on first use.
enum FrontUnderTest {
    static let port: Int? = {
        var options = ServerOptions(host: "127.0.0.1", port: 0)
        options.threads = 1
        options.adapterSetAliases = ["DEFAULT": "DEMO"]
        let server = LightstreamerServer(options: options, adapterSets: [DemoAdapters.makeDemoAdapterSet()])
        let started = DispatchSemaphore(value: 0)
        let box = PortBox()
        Task {
            do {
                try await server.start()
                box.port = server.port
            } catch {
                box.port = nil
            }
            started.signal()
        }
        started.wait()
        return box.port
    }()

    final class PortBox: @unchecked Sendable {
        var port: Int?
    }
}
