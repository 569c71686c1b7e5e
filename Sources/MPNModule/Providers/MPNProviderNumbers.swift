import Crypto
import Foundation
import TLCP

/// Numbers that reach the MPN Module from outside (provider answers, the configuration) and
/// become times, each parsed or clamped with `Saturating` into the range documented here and
/// in docs/RELIABILITY.md ("MPN Module"). Nothing here traps, whatever the input.
enum MPNProviderNumbers {
    /// `Retry-After` (APNs, FCM): delay-seconds only, 0...86 400 (one day); more is taken as
    /// one day. An HTTP date, a negative or fractional number or any other text is ignored
    /// (nil): the configured backoff applies.
    static let retryAfterSeconds: ClosedRange<Int64> = 0...86_400
    /// OAuth2 `expires_in` of an FCM access token: 0...86 400 seconds (Google issues 3 599). A
    /// number out of range is clamped, a fraction truncated, anything not a number gives 3 600.
    static let expiresInSeconds: ClosedRange<Int64> = 0...86_400
    /// HTTP request timeouts from the configuration: 1 s...1 h.
    static let requestTimeoutSeconds: ClosedRange<Int64> = 1...3_600
    /// APNs `apns-expiration` offset from the configuration: 0...30 days.
    static let apnsExpirationSeconds: ClosedRange<Int64> = 0...(30 * 86_400)

    static func retryAfter(_ header: String?) -> Duration? {
        guard let header, let s = Saturating.seconds(header, in: retryAfterSeconds) else { return nil }
        return .seconds(s)
    }

    /// `expires_in` as a JSON number or a decimal string.
    static func expiresIn(_ value: JSONValue?, default fallback: Int64 = 3_600) -> Int64 {
        switch value {
        case .number(let text)?:
            guard let d = Double(text) else { return fallback }
            return Saturating.int64(d, in: expiresInSeconds, nan: fallback)
        case .string(let text)?:
            return Saturating.seconds(text, in: expiresInSeconds) ?? fallback
        default:
            return fallback
        }
    }

    /// Whole seconds of a configured duration within `range`.
    static func seconds(_ d: Duration, in range: ClosedRange<Int64>) -> Int64 {
        Saturating.clamp(d.components.seconds, to: range)
    }
}

/// Delays of the retry policy and pacing, in the engine clock's nanoseconds.
enum MPNRetryDelay {
    /// A provider's hint (`MPNDeliveryResult.retry(after:)`) in milliseconds, within
    /// 0...`MPNProviderNumbers.retryAfterSeconds` (a negative one is 0).
    static func millis(_ d: Duration) -> Int64 {
        let (s, atto) = d.components
        let seconds = Saturating.clamp(s, to: MPNProviderNumbers.retryAfterSeconds)
        let extra = seconds == s && s < MPNProviderNumbers.retryAfterSeconds.upperBound ? max(0, atto / 1_000_000_000_000_000) : 0
        return Saturating.add(Saturating.millis(seconds: seconds), extra)
    }

    /// `millis` (negative taken as 0) as nanoseconds, stopping at `Int64.max`.
    static func nanoseconds(_ millis: Int64) -> UInt64 {
        UInt64(Saturating.nanoseconds(millis: max(0, millis)))
    }
}

/// The provider-side id of a notification: an idempotency key as a lowercase UUID (`apns-id`
/// must be one). A key that is a UUID is used as is; any other is hashed (SHA-256, first 16
/// bytes, version and variant bits of a name-based UUID), so one key always gives one UUID.
enum MPNNotificationId {
    static func uuid(for key: String) -> String {
        if let u = UUID(uuidString: key) { return u.uuidString.lowercased() }
        var bytes = Array(SHA256.hash(data: Data(key.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let u = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        return u.uuidString.lowercased()
    }
}
