import Foundation
import NIOConcurrencyHelpers

/// A device that receives mobile push notifications (docs/protocol/CLIENT-API.md §10).
/// Created from a device token, then registered with `LightstreamerClient.register(forMPN:)`;
/// the server gives it a permanent `deviceId`. Status and id are kept up to date by the client.
public final class MPNDevice: CustomStringConvertible, Sendable {
    /// The status of a device: `UNKNOWN` until registered, `REGISTERED`, or `SUSPENDED` when
    /// the server stopped sending to it (for instance its token was refused by the push service).
    public enum Status: String, CustomStringConvertible, Sendable {
        /// Not registered (yet).
        case UNKNOWN
        /// Registered with the server.
        case REGISTERED
        /// Registered, but the server stopped sending notifications to it.
        case SUSPENDED
        /// The status's name.
        public var description: String { rawValue }
    }

    /// `Apple` or `Google`.
    public let platform: String
    /// The application the notifications are for (bundle identifier or FCM package name).
    public let applicationId: String
    /// The device token the push service gave the application.
    public let deviceToken: String
    /// The token stored by the previous `MPNDevice` of this application, if any.
    public let previousDeviceToken: String?

    /// The mutable state, only touched under the box's lock.
    /// `@unchecked Sendable`: the delegates are of the official API's non-`Sendable` protocol; the box's lock guards them.
    private struct State: @unchecked Sendable {
        var delegates = DelegateList<MPNDeviceDelegate>()
        var status: Status = .UNKNOWN
        var statusTimestamp: Int64?
        var deviceId: String?
    }

    private let state = NIOLockedValueBox(State())

    /// An Apple device. The application id is the `LS_appID` user default, else the main
    /// bundle identifier (as in the official library, docs/protocol/CLIENT-API.md §10). Where
    /// neither exists (a Linux executable has no bundle identifier) it does not trap: the
    /// application id falls back to the process name, and a warning is logged; use
    /// `init(deviceToken:applicationId:platform:tokenStore:)` to choose it. The previous token
    /// is read from, and the new one written to, `MPNTokenStore.default`.
    public convenience init(deviceToken: String) {
        self.init(deviceToken: deviceToken, applicationId: Self.defaultApplicationId(), platform: "Apple", tokenStore: .default)
    }

    /// `LS_appID` user default, main bundle identifier, else the process name (never empty).
    static func defaultApplicationId(
        defaults: UserDefaults = .standard, bundle: Bundle = .main,
        processName: String = ProcessInfo.processInfo.processName
    ) -> String {
        if let id = defaults.string(forKey: "LS_appID"), !id.isEmpty { return id }
        if let id = bundle.bundleIdentifier, !id.isEmpty { return id }
        let fallback = processName.isEmpty ? "lightstreamer-swift-client" : processName
        LogManager.session?.warn("No LS_appID user default and no main bundle identifier: the MPN application ID is '\(fallback)'")
        return fallback
    }

    /// A device with an explicit application id and platform (`Apple` or `Google`), for Linux
    /// and for FCM tokens. The previous token is read from `tokenStore` (nil: none is kept),
    /// then the new one is stored. Preconditions: token and application id not empty; platform
    /// `Apple` or `Google`.
    public init(
        deviceToken: String, applicationId: String, platform: String = "Apple",
        tokenStore: MPNTokenStore? = .default
    ) {
        precondition(!deviceToken.isEmpty, "The device token must not be empty")
        precondition(!applicationId.isEmpty, "The application ID must not be empty")
        precondition(platform == "Apple" || platform == "Google", "The platform must be Apple or Google")
        self.platform = platform
        self.applicationId = applicationId
        self.deviceToken = deviceToken
        previousDeviceToken = tokenStore?.token(platform: platform, applicationId: applicationId)
        tokenStore?.store(deviceToken, platform: platform, applicationId: applicationId)
    }

    /// The token the server should know this device by before this one (rotation), if it differs.
    var rotatedFrom: String? {
        guard let p = previousDeviceToken, p != deviceToken else { return nil }
        return p
    }

    // MARK: delegates

    /// Adds a delegate, which receives the device's events; it is told with `mpnDeviceDidAddDelegate`.
    public func addDelegate(_ delegate: MPNDeviceDelegate) {
        let added = state.withLockedValue { s in s.delegates.add(delegate) }
        guard added else { return }
        let box = UncheckedBox(delegate)
        CallbackQueue.queue.async { box.value.mpnDeviceDidAddDelegate(self) }
    }

    /// Removes a delegate; it is told with `mpnDeviceDidRemoveDelegate`.
    public func removeDelegate(_ delegate: MPNDeviceDelegate) {
        let removed = state.withLockedValue { s in s.delegates.remove(delegate) }
        guard removed else { return }
        let box = UncheckedBox(delegate)
        CallbackQueue.queue.async { box.value.mpnDeviceDidRemoveDelegate(self) }
    }

    /// The delegates currently added.
    public var delegates: [MPNDeviceDelegate] { state.withLockedValue { s in s.delegates.all } }

    // MARK: state

    /// Whether the server registered the device (`REGISTERED`).
    public var isRegistered: Bool { state.withLockedValue { s in s.status == .REGISTERED } }
    /// Whether the server suspended the device (`SUSPENDED`).
    public var isSuspended: Bool { state.withLockedValue { s in s.status == .SUSPENDED } }
    /// The current status.
    public var status: Status { state.withLockedValue { s in s.status } }
    /// Server time (ms) of the current status.
    public var statusTimestamp: Int64? { state.withLockedValue { s in s.statusTimestamp } }
    /// The server's id for this device, from `MPNREG`.
    public var deviceId: String? { state.withLockedValue { s in s.deviceId } }

    func apply(status: Status, timestamp: Int64?, deviceId: String?) {
        state.withLockedValue { s in
            s.status = status
            s.statusTimestamp = timestamp
            s.deviceId = deviceId
        }
    }

    /// `[deviceToken: …, prevDeviceToken: …, applicationId: …, platform: …]`.
    public var description: String {
        var map = DescriptionMap()
        map.add("deviceToken", deviceToken)
        map.add("prevDeviceToken", previousDeviceToken)
        map.add("applicationId", applicationId)
        map.add("platform", platform)
        return map.description
    }
}
