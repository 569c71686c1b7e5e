import ArgumentParser
import Foundation
import LightstreamerClient

/// Connection options shared by every subcommand (docs/protocol/CLI.md §1).
struct ConnectionArguments: ParsableArguments {
    @Option(help: "Server address, http[s]://host:port[/prefix].") var server = "http://127.0.0.1:8080"
    @Option(name: .customLong("adapter-set"), help: "Adapter Set name.") var adapterSet: String?
    @Option(help: "User name.") var user: String?
    @Option(help: "Password.") var password: String?
    @Option(help: "WS, WS-STREAMING, WS-POLLING, HTTP, HTTP-STREAMING or HTTP-POLLING.") var transport: String?
    @Option(name: .customLong("content-length"), help: "HTTP streaming content length (bytes).") var contentLength: UInt64?
    @Option(name: .customLong("keepalive-ms")) var keepaliveMs: Int?
    @Option(name: .customLong("idle-timeout-ms")) var idleTimeoutMs: Int?
    @Option(name: .customLong("polling-interval-ms")) var pollingIntervalMs: Int?
    @Option(name: .customLong("retry-delay-ms")) var retryDelayMs: Int?
    @Option(name: .customLong("first-retry-max-delay-ms")) var firstRetryMaxDelayMs: Int?
    @Option(name: .customLong("reconnect-timeout-ms")) var reconnectTimeoutMs: Int?
    @Option(name: .customLong("stalled-timeout-ms")) var stalledTimeoutMs: Int?
    @Option(name: .customLong("session-recovery-timeout-ms")) var sessionRecoveryTimeoutMs: Int?
    @Option(name: .customLong("reverse-heartbeat-ms")) var reverseHeartbeatMs: Int?
    @Option(name: .customLong("requested-max-bandwidth"), help: "kbit/s or 'unlimited'.") var requestedMaxBandwidth: String?
    @Flag(help: "Enable the slowing algorithm.") var slowing = false
    @Flag(name: .customLong("server-instance-address-ignored")) var serverInstanceAddressIgnored = false
    @Option(name: .customLong("log-level"), help: "Library logs on stderr: trace, debug, info, warn, error.") var logLevel: String?

    mutating func validate() throws {
        if case .failure = OptionValue.address(server) { throw ValidationError("Invalid --server '\(server)'") }
        if let t = transport, TransportSelection(rawValue: t) == nil { throw ValidationError("Invalid --transport '\(t)'") }
        if let b = requestedMaxBandwidth, OptionValue.bandwidth(b) == nil {
            throw ValidationError("Invalid --requested-max-bandwidth '\(b)'")
        }
        for (name, v, strict) in [
            ("keepalive-ms", keepaliveMs, false), ("idle-timeout-ms", idleTimeoutMs, false),
            ("polling-interval-ms", pollingIntervalMs, false), ("retry-delay-ms", retryDelayMs, true),
            ("first-retry-max-delay-ms", firstRetryMaxDelayMs, true), ("reconnect-timeout-ms", reconnectTimeoutMs, true),
            ("stalled-timeout-ms", stalledTimeoutMs, true), ("session-recovery-timeout-ms", sessionRecoveryTimeoutMs, false),
            ("reverse-heartbeat-ms", reverseHeartbeatMs, false),
        ] {
            if let v, strict ? v <= 0 : v < 0 { throw ValidationError("Invalid --\(name) \(v)") }
        }
        if let c = contentLength, c == 0 { throw ValidationError("Invalid --content-length 0") }
    }

    /// A configured client (not connected).
    func makeClient() -> LightstreamerClient {
        if let logLevel {
            let level: ConsoleLogLevel =
                ["trace": .trace, "debug": .debug, "info": .info, "warn": .warn, "error": .error][logLevel] ?? .info
            LightstreamerClient.setLoggerProvider(ConsoleLoggerProvider(level: level))
        }
        let client = LightstreamerClient(serverAddress: server, adapterSet: adapterSet)
        client.connectionDetails.user = user
        if let password { client.connectionDetails.setPassword(password) }
        let o = client.connectionOptions
        if let t = transport { o.forcedTransport = TransportSelection(rawValue: t) }
        if let v = contentLength { o.contentLength = v }
        if let v = keepaliveMs { o.keepaliveInterval = v }
        if let v = idleTimeoutMs { o.idleTimeout = v }
        if let v = pollingIntervalMs { o.pollingInterval = v }
        if let v = retryDelayMs { o.retryDelay = v }
        if let v = firstRetryMaxDelayMs { o.firstRetryMaxDelay = v }
        if let v = reconnectTimeoutMs { o.reconnectTimeout = v }
        if let v = stalledTimeoutMs { o.stalledTimeout = v }
        if let v = sessionRecoveryTimeoutMs { o.sessionRecoveryTimeout = v }
        if let v = reverseHeartbeatMs { o.reverseHeartbeatInterval = v }
        if let b = requestedMaxBandwidth, let bw = OptionValue.bandwidth(b) { o.requestedMaxBandwidth = bw }
        if slowing { o.slowingEnabled = true }
        if serverInstanceAddressIgnored { o.serverInstanceAddressIgnored = true }
        return client
    }
}

/// Parsing of option values without trapping (the library traps on bad values).
enum OptionValue {
    static func address(_ s: String) -> Result<Void, ValidationError> {
        guard let r = s.range(of: "://") else { return .failure(ValidationError("malformed")) }
        let scheme = s[..<r.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https", !s.contains("?"), s.count > r.upperBound.utf16Offset(in: s) else {
            return .failure(ValidationError("malformed"))
        }
        let host = s[r.upperBound...].split(separator: "/").first ?? ""
        if host.isEmpty || host.contains(" ") { return .failure(ValidationError("malformed")) }
        let parts = host.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, Int(parts[1]).map({ $0 <= 0 || $0 > 65535 }) ?? true { return .failure(ValidationError("bad port")) }
        if parts.count > 2, !host.hasPrefix("[") { return .failure(ValidationError("malformed")) }
        return .success(())
    }

    static func bandwidth(_ s: String) -> RequestedMaxBandwidth? {
        if s == "unlimited" { return .unlimited }
        guard let v = Double(s), v > 0, v.isFinite else { return nil }
        return .limited(v)
    }
}

/// Exit codes of every subcommand.
enum ExitStatus {
    static let done: Int32 = 0
    static let timeout: Int32 = 1
    static let refused: Int32 = 2
    static let noSession: Int32 = 3
    static let badArguments: Int32 = 4
}

/// stdout of the CLI, from any thread: one JSON object or text line at a time, appended to one
/// bounded buffer and written with large `write(2)` calls. The buffer is written when it holds
/// `OutputBuffer.limit` bytes (on the thread that filled it, which waits for stdout: a slow
/// reader slows the callbacks down instead of growing a queue), within a few milliseconds of its
/// first byte otherwise, and before the process exits (`flush()`).
enum Output {
    static let buffer = OutputBuffer(fd: 1)

    static func json(_ object: [String: Any?]) {
        buffer.write { w in
            w.object(object)
            w.byte(0x0A)
        }
    }

    static func line(_ text: String) {
        buffer.write { w in
            w.append(text)
            w.byte(0x0A)
        }
    }

    /// Appends whatever `body` writes (it should end with a newline).
    static func write(_ body: (inout JSONWriter) -> Void) { buffer.write(body) }

    /// Writes out what is buffered (before exiting, before writing to stderr).
    static func flush() { buffer.flush() }

    static func error(_ text: String) {
        flush()
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// `<what> refused by the server: <code> <message>` on stderr.
    static func refused(_ what: String, code: Int, message: String?) {
        let m = message.map { $0.isEmpty ? "" : " \($0)" } ?? ""
        error("\(what) refused by the server: \(code)\(m)")
    }
}

/// A bounded byte buffer in front of a file descriptor (see `Output`).
/// `@unchecked Sendable`: the writer and its flag are only touched under `lock`.
final class OutputBuffer: @unchecked Sendable {
    /// Bytes buffered before a write is made at once.
    static let limit = 64 << 10
    /// How long a partly filled buffer may wait for more lines.
    static let delay = DispatchTimeInterval.milliseconds(2)

    private let fd: Int32
    private let lock = NSLock()
    private var writer = JSONWriter(capacity: OutputBuffer.limit + 4096)
    private var flushScheduled = false

    init(fd: Int32) { self.fd = fd }

    func write(_ body: (inout JSONWriter) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body(&writer)
        if writer.count >= Self.limit {
            writeOut()
        } else if !flushScheduled, writer.count > 0 {
            flushScheduled = true
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.delay) { [self] in
                lock.withLock {
                    flushScheduled = false
                    writeOut()
                }
            }
        }
    }

    func flush() { lock.withLock { writeOut() } }

    /// Under the lock. A failed write drops the bytes; a closed pipe ends the process.
    private func writeOut() {
        writer.withBytes { p in
            var offset = 0
            while offset < p.count {
                let n = systemWrite(fd, p.baseAddress! + offset, p.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else if n < 0 && errno == EPIPE {
                    // The reader went away (`| head`): end as SIGPIPE would have.
                    _exit(141)
                } else {
                    break
                }
            }
        }
        writer.removeAll()
    }
}

private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }
