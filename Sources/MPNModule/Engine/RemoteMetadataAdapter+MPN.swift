import LightstreamerServer

/// A remote Metadata Adapter answers the MPN hooks with `MDA`, `MSA` and `MDC` (docs/ARI.md).
extension RemoteMetadataAdapter: MPNMetadataHooks {
    public func notifyMpnDeviceAccess(user: String?, sessionId: String, device: MPNDeviceInfo) async throws {
        try await mpnDeviceAccess(
            user: user, sessionId: sessionId, platform: device.platform,
            applicationId: device.applicationId, deviceToken: device.deviceToken)
    }

    public func notifyMpnSubscriptionActivation(
        user: String?, sessionId: String, table: TableInfo,
        subscription: MPNSubscriptionInfo
    ) async throws {
        let device = subscription.device
        try await mpnSubscriptionActivation(
            user: user, sessionId: sessionId, table: table, platform: device.platform,
            applicationId: device.applicationId, deviceToken: device.deviceToken,
            trigger: subscription.trigger, notificationFormat: subscription.notificationFormat)
    }

    public func notifyMpnDeviceTokenChange(
        user: String?, sessionId: String, device: MPNDeviceInfo,
        newDeviceToken: String
    ) async throws {
        try await mpnDeviceTokenChange(
            user: user, sessionId: sessionId, platform: device.platform,
            applicationId: device.applicationId, deviceToken: device.deviceToken,
            newDeviceToken: newDeviceToken)
    }
}
