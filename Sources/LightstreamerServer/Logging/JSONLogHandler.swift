import Foundation
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A swift-log `LogHandler` writing one JSON object per line, for log collectors
/// (`lightstreamer-server --log-format json`):
///
///     {"timestamp":"2026-11-24T22:50:01.123Z","level":"info","label":"lightstreamer.server",
///      "message":"session created","metadata":{"session":"S1…","user":"alice"},"source":"…"}
///
/// (one line). Strings are escaped as RFC 8259 §7 requires (quote, backslash, control
/// characters), so a message or value holding quotes or line feeds stays one line. Metadata
/// values keep their shape: strings, arrays and dictionaries. Handler metadata, the metadata
/// provider's and the call's are merged in that order (later wins).
public struct JSONLogHandler: LogHandler {
    /// Where the lines go: each call gets one complete line, newline included.
    public typealias Sink = @Sendable (String) -> Void

    /// Lines below this level are dropped (default info).
    public var logLevel: Logger.Level = .info
    /// Metadata on every line of this handler.
    public var metadata: Logger.Metadata = [:]
    /// Metadata computed for each line (task-local context, for example).
    public var metadataProvider: Logger.MetadataProvider?
    /// The logger's label, written as `label`.
    public let label: String
    private let sink: Sink

    /// A handler that hands each line to `sink`.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, sink: @escaping Sink) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.sink = sink
    }

    /// A handler writing to standard error (each line with one `write`, lines never mixed).
    public static func standardError(label: String, metadataProvider: Logger.MetadataProvider? = nil) -> JSONLogHandler {
        JSONLogHandler(label: label, metadataProvider: metadataProvider) { StandardErrorLines.shared.emit($0) }
    }

    /// One metadata value of this handler.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line: timestamp, level, label, message, the merged metadata and the source.
    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let explicit = event.metadata { all.merge(explicit) { _, new in new } }
        // An error passed to the call goes in the metadata, as text.
        if let error = event.error { all["error"] = "\(String(describing: error))" }
        sink(
            Self.line(
                timestamp: Date(), level: event.level, label: label, message: event.message.description, metadata: all,
                source: event.source))
    }

    /// One JSON line (newline-terminated).
    public static func line(
        timestamp: Date, level: Logger.Level, label: String, message: String,
        metadata: Logger.Metadata, source: String
    ) -> String {
        var out = "{\"timestamp\":"
        appendString(&out, iso8601(timestamp))
        out += ",\"level\":"
        appendString(&out, level.rawValue)
        out += ",\"label\":"
        appendString(&out, label)
        out += ",\"message\":"
        appendString(&out, message)
        out += ",\"metadata\":"
        appendValue(&out, .dictionary(metadata))
        out += ",\"source\":"
        appendString(&out, source)
        out += "}\n"
        return out
    }

    static func appendValue(_ out: inout String, _ v: Logger.Metadata.Value) {
        switch v {
        case .string(let s): appendString(&out, s)
        case .stringConvertible(let c): appendString(&out, c.description)
        case .array(let a):
            out += "["
            for (i, e) in a.enumerated() {
                if i > 0 { out += "," }
                appendValue(&out, e)
            }
            out += "]"
        case .dictionary(let d):
            out += "{"
            // Sorted keys: the same metadata always prints the same way.
            for (i, k) in d.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                appendString(&out, k)
                out += ":"
                if let value = d[k] { appendValue(&out, value) } else { out += "null" }
            }
            out += "}"
        }
    }

    /// `s` as a JSON string.
    static func appendString(_ out: inout String, _ s: String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else if u.value == 0x2028 || u.value == 0x2029 {
                    // Valid JSON, but line separators for some readers: escaped.
                    out += u.value == 0x2028 ? "\\u2028" : "\\u2029"
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }

    /// UTC, milliseconds: `2026-11-24T22:50:01.123Z`.
    static func iso8601(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        guard t.isFinite, abs(t) < 1e13 else { return "1970-01-01T00:00:00.000Z" }
        var seconds = time_t(t.rounded(.down))
        let millis = min(999, max(0, Int((t - Double(seconds)) * 1000)))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "1970-01-01T00:00:00.000Z" }
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }
}

/// Standard error, one complete line per `write` call, under a lock.
final class StandardErrorLines: Sendable {
    static let shared = StandardErrorLines()
    private let lock = NIOLock()

    func emit(_ line: String) {
        lock.withLock {
            var line = line
            line.withUTF8 { p in
                guard var base = p.baseAddress else { return }
                var left = p.count
                while left > 0 {
                    let n = write(2, base, left)
                    if n < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    left -= n
                    base += n
                }
            }
        }
    }
}
