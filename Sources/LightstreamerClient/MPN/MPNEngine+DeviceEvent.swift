import TLCP

extension MPNEngine {
    /// Events for `MPNDeviceDelegate`.
    enum DeviceEvent: Sendable, Equatable {
        case registered
        case suspended
        case resumed
        case registrationFailed(code: Int, message: String?)
        case status(MPNDevice.Status, timestamp: Int64)
        case subscriptionsUpdated
        case badgeReset
        case badgeResetFailed(code: Int, message: String?)

        func deliver(to d: MPNDeviceDelegate, _ device: MPNDevice) {
            switch self {
            case .registered: d.mpnDeviceDidRegister(device)
            case .suspended: d.mpnDeviceDidSuspend(device)
            case .resumed: d.mpnDeviceDidResume(device)
            case .registrationFailed(let c, let m): d.mpnDevice(device, didFailRegistrationWithErrorCode: c, message: m)
            case .status(let s, let ts): d.mpnDevice(device, didChangeStatus: s, timestamp: ts)
            case .subscriptionsUpdated: d.mpnDeviceDidUpdateSubscriptions(device)
            case .badgeReset: d.mpnDeviceDidResetBadge(device)
            case .badgeResetFailed(let c, let m): d.mpnDevice(device, didFailBadgeResetWithErrorCode: c, message: m)
            }
        }
    }
}
