import TLCP

/// What an Apple device token may look like: the hex text of the token's bytes (APNs puts it
/// in the request path, `/3/device/<hex>`), an even number of hex digits, at most
/// `appleMaxHexDigits` (tokens are 32 bytes today; the margin allows for longer ones Apple
/// announced it may issue). Checked at registration (refused with code 65) and again before a
/// token goes into a URL, so no other character ever reaches the path.
public enum MPNDeviceToken {
    public static let appleMaxHexDigits = 200

    public static func isValidApple(_ token: some StringProtocol) -> Bool {
        let n = token.utf8.count
        guard n > 0, n % 2 == 0, n <= appleMaxHexDigits else { return false }
        return token.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }
    }

    /// Throws 65 unless `token` is a valid token for `platform` (Google tokens are opaque:
    /// only the size limit and non-emptiness apply to them).
    public static func check(_ token: String, platform: MPNPlatform) throws(MPNError) {
        guard platform == .apple else { return }
        guard isValidApple(token) else { throw .invalidDeviceToken }
    }
}
