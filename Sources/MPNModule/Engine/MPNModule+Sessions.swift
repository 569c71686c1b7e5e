import LightstreamerServer
import NIOConcurrencyHelpers
import TLCP

/// The MPN Module serves the MPN operations of server sessions.
extension MPNModule: MPNRequestHandler {
    /// Forgets the devices registered in the session: its internal items are no longer served
    /// to that session id.
    public nonisolated func sessionClosed(sessionId: String) {
        internalAdapter.sessions.forget(sessionId)
    }

    /// Runs the operation; past `requestTimeoutMillis` (a store that does not answer) the
    /// session gets 41 at once, while the operation itself may still complete.
    public nonisolated func handle(_ operation: ControlOperation, context: MPNSessionContext) async -> Result<MPNOutcome, SessionRefusal> {
        let timeout = configuration.requestTimeoutMillis
        guard timeout > 0 else { return await perform(operation, context: context) }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Result<MPNOutcome, SessionRefusal>, Never>) in
            let once = NIOLockedValueBox<CheckedContinuation<Result<MPNOutcome, SessionRefusal>, Never>?>(continuation)
            let work = Task {
                let result = await self.perform(operation, context: context)
                once.withLockedValue { c in c.take() }?.resume(returning: result)
            }
            Task {
                // At most a day, whatever the configuration says.
                try? await Task.sleep(for: .milliseconds(Saturating.clamp(timeout, to: 1...86_400_000)))
                guard let c = once.withLockedValue({ c in c.take() }) else { return }
                self.logger.error("MPN request timed out", metadata: ["op": "\(operation.opName)", "session": "\(context.sessionId)"])
                c.resume(returning: .failure(SessionRefusal(code: 41, message: "MPN request timed out after \(timeout) ms")))
                _ = work
            }
        }
    }

    func perform(_ operation: ControlOperation, context: MPNSessionContext) async -> Result<MPNOutcome, SessionRefusal> {
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
