/// What the MPN Module shows on the dashboard and lets an administrator do (docs/ADMIN.md).
/// The server does not depend on the MPN Module: the module installs an implementation with
/// `LightstreamerServer.setMPNAdminHook`; without one the MPN figures are absent and the MPN
/// actions answer 404.
public protocol MPNAdminHook: Sendable {
    /// Current figures; called about once a second by the `MONITOR` adapter set.
    func monitorFigures() async -> MPNMonitorFigures
    /// Deletes a device and its subscriptions. False when no device has that id.
    func deleteDevice(id: String) async throws -> Bool
    /// Stops (or starts again) sending notifications to the devices of one application.
    /// False when the module knows no such application.
    func setApplicationSuspended(platform: String, appId: String, suspended: Bool) async throws -> Bool
}

/// MPN figures for the dashboard.
public struct MPNMonitorFigures: Sendable, Equatable {
    /// The figures of one push application.
    public struct Application: Sendable, Equatable {
        /// `Apple` or `Google`.
        public var platform: String
        /// The application id.
        public var appId: String
        /// Notifications sent.
        public var sent: Int
        /// Notifications that failed.
        public var failed: Int
        /// Whether the application's deliveries are suspended by an administrator.
        public var suspended: Bool

        /// Figures given in code.
        public init(platform: String, appId: String, sent: Int, failed: Int, suspended: Bool) {
            self.platform = platform
            self.appId = appId
            self.sent = sent
            self.failed = failed
            self.suspended = suspended
        }
    }

    /// Registered devices.
    public var devices: Int
    /// MPN subscriptions waiting for their trigger or sending on every update.
    public var activeSubscriptions: Int
    /// MPN subscriptions whose trigger held.
    public var triggeredSubscriptions: Int
    /// Per-application figures.
    public var applications: [Application]

    /// Figures given in code (none by default).
    public init(devices: Int = 0, activeSubscriptions: Int = 0, triggeredSubscriptions: Int = 0, applications: [Application] = []) {
        self.devices = devices
        self.activeSubscriptions = activeSubscriptions
        self.triggeredSubscriptions = triggeredSubscriptions
        self.applications = applications
    }
}
