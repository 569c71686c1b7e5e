import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The most bytes of a client connection's output that the kernel keeps unsent
/// (`TCP_NOTSENT_LOWAT`, `FrontOptions.maxSocketUnsentBytes`).
///
/// A connection's send buffer grows with its congestion window, to megabytes: on loopback a
/// client that never read took 2.9 MB before the kernel refused more (`SocketUnsentLimitTests`).
/// A client that stops reading (a phone in a tunnel, a frozen tab, a slow reader on purpose)
/// then leaves every update of its session in the kernel until that buffer is full, minutes of
/// them, before the server notices. Meanwhile the session
/// streams as if the client kept up: nothing is folded, the client gets stale updates when it
/// reads again, and thousands of such clients take the machine's TCP memory, shared by every
/// connection. With this limit the kernel refuses a write once that many bytes wait unsent, so
/// NIO's write buffer fills and the session holds its MERGE updates folded at once
/// (`LightstreamerServer.writeBufferWaterMark`). What is in flight, sent and not yet acknowledged,
/// is bounded by the client's receive window instead. Measured in BENCHMARKS.md, "Clients that
/// stop reading".
enum SocketUnsentLimit {
    /// The socket option, where the platform has it.
    static var option: ChannelOptions.Types.SocketOption? {
        #if os(Linux) || canImport(Darwin)
        ChannelOptions.Types.SocketOption(level: .tcp, name: NIOBSDSocket.Option(rawValue: CInt(TCP_NOTSENT_LOWAT)))
        #else
        nil
        #endif
    }

    /// The largest value accepted (`ServerConfiguration.Front`).
    static let maximumBytes = 64 << 20

    /// The option's value for `bytes` (at most `maximumBytes`); nil for 0 or less (the
    /// kernel's own behaviour, no limit).
    static func value(for bytes: Int) -> SocketOptionValue? {
        bytes > 0 ? SocketOptionValue(clamping: min(bytes, maximumBytes)) : nil
    }
}
