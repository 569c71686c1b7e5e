import Foundation
import NIOConcurrencyHelpers

/// Wall-clock time in milliseconds since 1970: record timestamps, JWT `iat`, token expiry.
/// Injectable so that tests move time by hand.
public protocol MPNWallClock: Sendable {
    func nowMillis() -> Int64
}

extension MPNWallClock {
    public var nowSeconds: Int64 { nowMillis() / 1000 }
}

public struct SystemWallClock: MPNWallClock {
    public init() {}
    public func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}

/// A wall clock that moves only when told to (tests).
public final class ManualWallClock: MPNWallClock {
    private let now: NIOLockedValueBox<Int64>
    public init(millis: Int64 = 1_700_000_000_000) { now = NIOLockedValueBox(millis) }
    public func nowMillis() -> Int64 { now.withLockedValue { $0 } }
    public func advance(millis: Int64) { now.withLockedValue { $0 += millis } }
    public func set(millis: Int64) { now.withLockedValue { $0 = millis } }
}
