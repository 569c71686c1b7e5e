import ArgumentParser
import Foundation
import LightstreamerClient

/// Connection options shared by every subcommand (cli-session.md, "Starting").
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
        if let b = requestedMaxBandwidth, OptionValue.bandwidth(b) == nil { throw ValidationError("Invalid --requested-max-bandwidth '\(b)'") }
        for (name, v, strict) in [("keepalive-ms", keepaliveMs, false), ("idle-timeout-ms", idleTimeoutMs, false),
                                  ("polling-interval-ms", pollingIntervalMs, false), ("retry-delay-ms", retryDelayMs, true),
                                  ("first-retry-max-delay-ms", firstRetryMaxDelayMs, true), ("reconnect-timeout-ms", reconnectTimeoutMs, true),
                                  ("stalled-timeout-ms", stalledTimeoutMs, true), ("session-recovery-timeout-ms", sessionRecoveryTimeoutMs, false),
                                  ("reverse-heartbeat-ms", reverseHeartbeatMs, false)] {
            if let v, strict ? v <= 0 : v < 0 { throw ValidationError("Invalid --\(name) \(v)") }
        }
        if let c = contentLength, c == 0 { throw ValidationError("Invalid --content-length 0") }
    }

    /// A configured client (not connected).
    func makeClient() -> LightstreamerClient {
        if let logLevel {
            let level: ConsoleLogLevel = ["trace": .trace, "debug": .debug, "info": .info, "warn": .warn, "error": .error][logLevel] ?? .info
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

/// Prints one JSON object per line on stdout, flushed at once, from any thread.
enum Output {
    private static let lock = NSLock()

    static func json(_ object: [String: Any?]) {
        var clean: [String: Any] = [:]
        for (k, v) in object { clean[k] = v ?? NSNull() }
        guard let data = try? JSONSerialization.data(withJSONObject: clean, options: [.sortedKeys, .withoutEscapingSlashes]),
              let text = String(data: data, encoding: .utf8) else { return }
        line(text)
    }

    static func line(_ text: String) {
        lock.withLock {
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        }
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// `<what> refused by the server: <code> <message>` on stderr.
    static func refused(_ what: String, code: Int, message: String?) {
        let m = message.map { $0.isEmpty ? "" : " \($0)" } ?? ""
        error("\(what) refused by the server: \(code)\(m)")
    }
}
