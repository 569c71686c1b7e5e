import Foundation
import NIOConcurrencyHelpers
import TLCP

/// The `test` service level: each notification is written as one JSON line (to a file, or to
/// standard error) and counted as delivered. Lets the whole pipeline run with no credentials.
public final class LogProvider: MPNProvider {
    public enum Destination: Sendable {
        case standardError
        case file(path: String)
        /// Lines go to a closure (tests).
        case callback(@Sendable (String) -> Void)
    }

    private let destination: Destination
    private let clock: any MPNWallClock
    private let lock = NIOLock()

    public init(destination: Destination = .standardError, clock: any MPNWallClock = SystemWallClock()) {
        self.destination = destination
        self.clock = clock
    }

    /// The JSON line for one notification.
    public func line(for n: MPNNotification) -> String {
        JSONValue.object([
            JSONMember(key: "time", value: .number(String(clock.nowMillis()))),
            JSONMember(key: "platform", value: .string(n.platform.rawValue)),
            JSONMember(key: "appId", value: .string(n.applicationId)),
            JSONMember(key: "deviceToken", value: .string(n.deviceToken)),
            JSONMember(key: "deviceId", value: .string(n.deviceId)),
            JSONMember(key: "subscriptionId", value: .string(n.subscriptionId)),
            JSONMember(key: "triggered", value: .bool(n.triggered)),
            JSONMember(key: "payload", value: n.payload),
        ]).serialized
    }

    public func send(_ n: MPNNotification) async -> MPNDeliveryResult {
        let text = line(for: n)
        switch destination {
        case .callback(let f):
            f(text)
        case .standardError:
            lock.withLock { FileHandle.standardError.write(Data((text + "\n").utf8)) }
        case .file(let path):
            let ok = lock.withLock { () -> Bool in
                if !FileManager.default.fileExists(atPath: path) {
                    guard FileManager.default.createFile(atPath: path, contents: nil) else { return false }
                }
                guard let handle = FileHandle(forWritingAtPath: path) else { return false }
                defer { try? handle.close() }
                do {
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data((text + "\n").utf8))
                    return true
                } catch { return false }
            }
            if !ok { return .retry(after: nil, reason: "cannot write \(path)") }
        }
        return .delivered
    }
}
