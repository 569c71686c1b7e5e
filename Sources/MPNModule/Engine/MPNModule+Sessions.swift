import LightstreamerServer
import TLCP

/// The MPN Module serves the MPN operations of server sessions.
extension MPNModule: MPNRequestHandler {
    public func handle(_ operation: ControlOperation, context: MPNSessionContext) async -> Result<MPNOutcome, SessionRefusal> {
        let ctx = MPNRequestContext(adapterSet: context.adapterSet, user: context.user, sessionId: context.sessionId)
        do throws(MPNError) {
            switch operation {
            case .mpnRegister(let p):
                let r = try await register(p, context: ctx)
                return .success(.registered(deviceId: r.deviceId, adapterName: r.adapterName))
            case .mpnActivate(let p):
                let id = try await activate(p, context: ctx)
                return .success(.activated(subscriptionId: p.subscriptionId, mpnSubscriptionId: id))
            case .mpnReconf(let p):
                return .success(.reconfigured(mpnSubscriptionId: try await reconfigure(p, context: ctx)))
            case .mpnDeactivate(let deviceId, let target):
                return .success(.deactivated(mpnSubscriptionIds: try await deactivate(deviceId: deviceId, target: target, context: ctx)))
            case .mpnResetBadge(let deviceId):
                try await resetBadge(deviceId: deviceId, context: ctx)
                return .success(.badgeReset(deviceId: deviceId))
            default:
                throw MPNError.serverError("\(operation.opName) is not an MPN operation")
            }
        } catch {
            return .failure(SessionRefusal(code: error.code, message: error.message))
        }
    }
}
