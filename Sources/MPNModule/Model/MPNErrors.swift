/// A refused MPN request, with the TLCP control code (docs/protocol/TLCP.md §4.2,
/// docs/protocol/MPN.md §2) the client sees in `REQERR`.
public struct MPNError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var message: String

    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "MPN error \(code): \(message)" }

    /// 40: the MPN Module is disabled (for this adapter set, or entirely).
    public static let disabled = MPNError(code: 40, message: "MPN Module disabled")
    /// 41: internal resource error (database, timeout...).
    public static func internalResource(_ why: String) -> MPNError { .init(code: 41, message: "MPN internal error: \(why)") }
    /// 42: invalid platform.
    public static func invalidPlatform(_ p: String) -> MPNError { .init(code: 42, message: "Invalid MPN platform \(p)") }
    /// 43: unknown application id.
    public static func unknownApplication(_ app: String) -> MPNError { .init(code: 43, message: "Unknown MPN application \(app)") }
    /// 44: bad trigger syntax.
    public static func triggerSyntax(_ why: String) -> MPNError { .init(code: 44, message: "Invalid trigger: \(why)") }
    /// 45: unknown device id.
    public static let unknownDevice = MPNError(code: 45, message: "Unknown MPN device")
    /// 46: unknown MPN subscription id.
    public static let unknownSubscription = MPNError(code: 46, message: "Unknown MPN subscription")
    /// 47: unknown argument name (or index out of range) in the trigger or format.
    public static func badArgument(_ name: String) -> MPNError { .init(code: 47, message: "Invalid argument \(name)") }
    /// 48: device suspended.
    public static let deviceSuspended = MPNError(code: 48, message: "MPN device suspended")
    /// 49: an argument over its maximum size.
    public static func tooLong(_ what: String, max: Int) -> MPNError {
        .init(code: 49, message: "\(what) exceeds the maximum size of \(max)")
    }
    /// 49 as well: a device with `limits.subscriptionsPerDevice` MPN subscriptions asked for one more.
    public static func tooManySubscriptions(max: Int) -> MPNError {
        .init(code: 49, message: "MPN subscriptions of this device exceed the maximum of \(max)")
    }
    /// 50: no items or no fields.
    public static let noItemsOrFields = MPNError(code: 50, message: "MPN subscription has no items or no fields")
    /// 51: payload over the platform's limit.
    public static func payloadTooBig(_ size: Int, max: Int) -> MPNError {
        .init(code: 51, message: "Notification payload of \(size) bytes exceeds \(max)")
    }
    /// 52: format not valid JSON.
    public static func formatNotJSON(_ why: String) -> MPNError {
        .init(code: 52, message: "Notification format is not valid JSON: \(why)")
    }
    /// 53: empty format.
    public static let formatEmpty = MPNError(code: 53, message: "Notification format is empty")
    /// 56: pn_reconf parameters do not match the subscription.
    public static let reconfMismatch = MPNError(code: 56, message: "MPN subscription parameters do not match")
    /// 65 (TLCP "bad syntax or values"; MPN has no code of its own for it): a device token
    /// that is not a valid token of its platform (Apple: hex, even length, ≤ 200 digits).
    public static let invalidDeviceToken = MPNError(code: 65, message: "Invalid device token")
    /// 68: unexpected server error.
    public static func serverError(_ why: String) -> MPNError { .init(code: 68, message: "Unexpected error: \(why)") }
}
