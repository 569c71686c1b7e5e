import Foundation
import Logging
import NIOConcurrencyHelpers

/// Logging (docs/protocol/CLIENT-API.md §15): the library logs through an `LSLoggerProvider`;
/// without one, logs are discarded. `SwiftLogLoggerProvider` bridges to swift-log.
public protocol LSLoggerProvider {
    /// The logger for the lines of `category` (a name such as `lightstreamer.session`).
    func loggerWithCategory(_ category: String) -> LSLogger
}

/// A logger of one category, as an `LSLoggerProvider` gives it: one method per level, with and
/// without an error, and whether each level is written.
public protocol LSLogger {
    /// Logs `line` at the error level.
    func error(_ line: String)
    /// Logs `line` with an error at the error level.
    func error(_ line: String, withException exception: Error)
    /// Logs `line` at the warning level.
    func warn(_ line: String)
    /// Logs `line` with an error at the warning level.
    func warn(_ line: String, withException exception: Error)
    /// Logs `line` at the information level.
    func info(_ line: String)
    /// Logs `line` with an error at the information level.
    func info(_ line: String, withException exception: Error)
    /// Logs `line` at the debug level.
    func debug(_ line: String)
    /// Logs `line` with an error at the debug level.
    func debug(_ line: String, withException exception: Error)
    /// Logs `line` at the trace level.
    func trace(_ line: String)
    /// Logs `line` with an error at the trace level.
    func trace(_ line: String, withException exception: Error)
    /// Logs `line` at the fatal level.
    func fatal(_ line: String)
    /// Logs `line` with an error at the fatal level.
    func fatal(_ line: String, withException exception: Error)
    /// Whether lines at the trace level are written.
    var isTraceEnabled: Bool { get }
    /// Whether lines at the debug level are written.
    var isDebugEnabled: Bool { get }
    /// Whether lines at the information level are written.
    var isInfoEnabled: Bool { get }
    /// Whether lines at the warning level are written.
    var isWarnEnabled: Bool { get }
    /// Whether lines at the error level are written.
    var isErrorEnabled: Bool { get }
    /// Whether lines at the fatal level are written.
    var isFatalEnabled: Bool { get }
}

/// Console logs (stderr here; the official one uses os.log), at or above a level.
public class ConsoleLoggerProvider: LSLoggerProvider {
    let level: ConsoleLogLevel
    /// A provider whose loggers write lines at `level` and above.
    public init(level: ConsoleLogLevel) { self.level = level }
    /// A `ConsoleLogger` for `category`, at the provider's level.
    public func loggerWithCategory(_ category: String) -> LSLogger { ConsoleLogger(level: level, category: category) }
}

/// A logger that writes `LEVEL category line` to standard error, for lines at or above its level.
public class ConsoleLogger: LSLogger {
    let level: ConsoleLogLevel
    let category: String

    /// A logger of `category` writing lines at `level` and above.
    public init(level: ConsoleLogLevel, category: String) {
        self.level = level
        self.category = category
    }

    private func write(_ l: ConsoleLogLevel, _ name: String, _ line: String, _ e: Error? = nil) {
        guard l.rawValue >= level.rawValue else { return }
        var text = "\(name) \(category) \(line)"
        if let e { text += " [\(e)]" }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Logs `line` at the error level.
    public func error(_ line: String) { write(.error, "ERROR", line) }
    /// Logs `line` with an error at the error level.
    public func error(_ line: String, withException exception: Error) { write(.error, "ERROR", line, exception) }
    /// Logs `line` at the warning level.
    public func warn(_ line: String) { write(.warn, "WARN", line) }
    /// Logs `line` with an error at the warning level.
    public func warn(_ line: String, withException exception: Error) { write(.warn, "WARN", line, exception) }
    /// Logs `line` at the information level.
    public func info(_ line: String) { write(.info, "INFO", line) }
    /// Logs `line` with an error at the information level.
    public func info(_ line: String, withException exception: Error) { write(.info, "INFO", line, exception) }
    /// Logs `line` at the debug level.
    public func debug(_ line: String) { write(.debug, "DEBUG", line) }
    /// Logs `line` with an error at the debug level.
    public func debug(_ line: String, withException exception: Error) { write(.debug, "DEBUG", line, exception) }
    /// Logs `line` at the trace level.
    public func trace(_ line: String) { write(.trace, "TRACE", line) }
    /// Logs `line` with an error at the trace level.
    public func trace(_ line: String, withException exception: Error) { write(.trace, "TRACE", line, exception) }
    /// Logs `line` at the fatal level.
    public func fatal(_ line: String) { write(.fatal, "FATAL", line) }
    /// Logs `line` with an error at the fatal level.
    public func fatal(_ line: String, withException exception: Error) { write(.fatal, "FATAL", line, exception) }
    /// Whether lines at the trace level are written.
    public var isTraceEnabled: Bool { level.rawValue <= ConsoleLogLevel.trace.rawValue }
    /// Whether lines at the debug level are written.
    public var isDebugEnabled: Bool { level.rawValue <= ConsoleLogLevel.debug.rawValue }
    /// Whether lines at the information level are written.
    public var isInfoEnabled: Bool { level.rawValue <= ConsoleLogLevel.info.rawValue }
    /// Whether lines at the warning level are written.
    public var isWarnEnabled: Bool { level.rawValue <= ConsoleLogLevel.warn.rawValue }
    /// Whether lines at the error level are written.
    public var isErrorEnabled: Bool { level.rawValue <= ConsoleLogLevel.error.rawValue }
    /// Whether lines at the fatal level are written.
    public var isFatalEnabled: Bool { level.rawValue <= ConsoleLogLevel.fatal.rawValue }
}

/// Bridges the library's logs to swift-log: one `Logger` per category, labelled with it.
public final class SwiftLogLoggerProvider: LSLoggerProvider, Sendable {
    private let factory: @Sendable (String) -> Logger

    /// `makeLogger` builds the swift-log logger of a category (default: `Logger(label:)`).
    public init(makeLogger: @escaping @Sendable (String) -> Logger = { Logger(label: $0) }) {
        factory = makeLogger
    }

    /// A logger of `category` that writes through the swift-log logger made for it.
    public func loggerWithCategory(_ category: String) -> LSLogger { SwiftLogLogger(factory(category)) }
}

struct SwiftLogLogger: LSLogger {
    let logger: Logger
    init(_ logger: Logger) { self.logger = logger }

    private func log(_ level: Logger.Level, _ line: String, _ e: Error? = nil) {
        if let e { logger.log(level: level, "\(line)", metadata: ["error": "\(e)"]) } else { logger.log(level: level, "\(line)") }
    }

    func error(_ line: String) { log(.error, line) }
    func error(_ line: String, withException exception: Error) { log(.error, line, exception) }
    func warn(_ line: String) { log(.warning, line) }
    func warn(_ line: String, withException exception: Error) { log(.warning, line, exception) }
    func info(_ line: String) { log(.info, line) }
    func info(_ line: String, withException exception: Error) { log(.info, line, exception) }
    func debug(_ line: String) { log(.debug, line) }
    func debug(_ line: String, withException exception: Error) { log(.debug, line, exception) }
    func trace(_ line: String) { log(.trace, line) }
    func trace(_ line: String, withException exception: Error) { log(.trace, line, exception) }
    func fatal(_ line: String) { log(.critical, line) }
    func fatal(_ line: String, withException exception: Error) { log(.critical, line, exception) }
    var isTraceEnabled: Bool { logger.logLevel <= .trace }
    var isDebugEnabled: Bool { logger.logLevel <= .debug }
    var isInfoEnabled: Bool { logger.logLevel <= .info }
    var isWarnEnabled: Bool { logger.logLevel <= .warning }
    var isErrorEnabled: Bool { logger.logLevel <= .error }
    var isFatalEnabled: Bool { logger.logLevel <= .critical }
}

/// The library's loggers, by category (`lightstreamer.session`, `lightstreamer.stream`,
/// `lightstreamer.protocol`, …). `getLogger(_:)` gives application code a logger of a category
/// that follows the provider set with `LightstreamerClient.setLoggerProvider(_:)`, also when
/// the provider is set or changed later; without a provider its lines are discarded.
public final class LogManager: Sendable {
    /// `@unchecked`: only touched under the box's lock; the providers and loggers are the
    /// official API's protocols, which are not `Sendable` and are called from any thread.
    private struct State: @unchecked Sendable {
        var provider: LSLoggerProvider?
        /// The provider's logger per category, made on first use.
        var loggers: [String: LSLogger] = [:]
    }

    /// Locked: providers are set from any thread, loggers used from any thread.
    private static let state = NIOLockedValueBox(State())

    private init() {}

    /// A logger of `category` that writes through the current provider.
    public static func getLogger(_ category: String) -> LSLogger {
        CategoryLogger(category: category)
    }

    static func setProvider(_ p: LSLoggerProvider?) {
        state.withLockedValue { s in
            s.provider = p
            s.loggers = [:]
        }
    }

    /// The current provider's logger of `category`, or nil without a provider.
    static func logger(_ category: String) -> LSLogger? {
        state.withLockedValue { s -> LSLogger? in
            guard let provider = s.provider else { return nil }
            if let l = s.loggers[category] { return l }
            let l = provider.loggerWithCategory(category)
            s.loggers[category] = l
            return l
        }
    }

    static var session: LSLogger? { logger("lightstreamer.session") }
    static var stream: LSLogger? { logger("lightstreamer.stream") }
    static var proto: LSLogger? { logger("lightstreamer.protocol") }
}

/// What `LogManager.getLogger(_:)` returns: looks the provider's logger up on each call, so it
/// follows provider changes; discards when there is no provider.
private struct CategoryLogger: LSLogger {
    let category: String
    private var target: LSLogger? { LogManager.logger(category) }

    func error(_ line: String) { target?.error(line) }
    func error(_ line: String, withException exception: Error) { target?.error(line, withException: exception) }
    func warn(_ line: String) { target?.warn(line) }
    func warn(_ line: String, withException exception: Error) { target?.warn(line, withException: exception) }
    func info(_ line: String) { target?.info(line) }
    func info(_ line: String, withException exception: Error) { target?.info(line, withException: exception) }
    func debug(_ line: String) { target?.debug(line) }
    func debug(_ line: String, withException exception: Error) { target?.debug(line, withException: exception) }
    func trace(_ line: String) { target?.trace(line) }
    func trace(_ line: String, withException exception: Error) { target?.trace(line, withException: exception) }
    func fatal(_ line: String) { target?.fatal(line) }
    func fatal(_ line: String, withException exception: Error) { target?.fatal(line, withException: exception) }
    var isTraceEnabled: Bool { target?.isTraceEnabled ?? false }
    var isDebugEnabled: Bool { target?.isDebugEnabled ?? false }
    var isInfoEnabled: Bool { target?.isInfoEnabled ?? false }
    var isWarnEnabled: Bool { target?.isWarnEnabled ?? false }
    var isErrorEnabled: Bool { target?.isErrorEnabled ?? false }
    var isFatalEnabled: Bool { target?.isFatalEnabled ?? false }
}
