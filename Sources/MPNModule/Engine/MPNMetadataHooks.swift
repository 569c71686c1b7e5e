import LightstreamerServer
import TLCP

/// The device an MPN hook is asked about.
public struct MPNDeviceInfo: Sendable, Hashable {
    public var platform: MPNPlatform
    public var applicationId: String
    public var deviceToken: String
}

/// What an activation asks for, as the Metadata Adapter sees it.
public struct MPNSubscriptionInfo: Sendable, Hashable {
    public var device: MPNDeviceInfo
    /// Normalized (named arguments turned into `$[n]`).
    public var notificationFormat: String
    public var trigger: String?
}

/// Optional Metadata Adapter hooks for MPN (docs/protocol/MPN.md §3). A Metadata Adapter that also
/// conforms is asked before every MPN request; throwing refuses it: `MetadataError.subscription`
/// with a code ≤ 0 reaches the client unchanged, anything else is code 66.
public protocol MPNMetadataHooks: Sendable {
    /// Before every MPN operation on a device.
    func notifyMpnDeviceAccess(user: String?, sessionId: String, device: MPNDeviceInfo) async throws
    /// Before an activation (or modification) is stored.
    func notifyMpnSubscriptionActivation(
        user: String?, sessionId: String, table: TableInfo,
        subscription: MPNSubscriptionInfo) async throws
    /// Before a token change is applied.
    func notifyMpnDeviceTokenChange(user: String?, sessionId: String, device: MPNDeviceInfo, newDeviceToken: String) async throws
}

extension MPNMetadataHooks {
    public func notifyMpnDeviceAccess(user: String?, sessionId: String, device: MPNDeviceInfo) async throws {}
    public func notifyMpnSubscriptionActivation(
        user: String?, sessionId: String, table: TableInfo,
        subscription: MPNSubscriptionInfo
    ) async throws {}
    public func notifyMpnDeviceTokenChange(
        user: String?, sessionId: String, device: MPNDeviceInfo,
        newDeviceToken: String
    ) async throws {}
}

enum MPNHookCall {
    /// Runs a hook, mapping its refusal to an MPN error.
    static func run(_ body: () async throws -> Void) async throws(MPNError) {
        do {
            try await body()
        } catch let e as MetadataError {
            if case .subscription(let code, let message) = e, code <= 0 { throw MPNError(code: code, message: message) }
            throw MPNError(code: 66, message: "Metadata Adapter refused: \(e)")
        } catch let e as MPNError {
            throw e
        } catch {
            throw MPNError(code: 66, message: "Metadata Adapter error: \(error)")
        }
    }
}
