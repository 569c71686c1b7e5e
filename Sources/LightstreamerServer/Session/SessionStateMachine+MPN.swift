import TLCP

/// The MPN operations of docs/protocol/TLCP.md §2.3: handed to the MPN Module one at a time,
/// acknowledged only once the module has committed them, then reported with
/// MPNREG/MPNOK/MPNCONF/MPNDEL/ MPNZERO, which are data notifications (counted for recovery,
/// replayed like updates).
extension SessionStateMachine {
    mutating func enqueueMPN(_ operation: ControlOperation, origin: RequestOrigin, requestId: String, now: Int64) {
        if let device = operation.mpnDeviceId, !mpn.devices.contains(device) {
            replyError(
                origin, requestId, SessionRefusal(code: 45, message: "MPN device \(device) not registered in this session"),
                now: now)
            return
        }
        guard mpn.waiting.count < settings.maxQueuedMPNOperations else {
            replyError(
                origin, requestId,
                SessionRefusal(
                    code: 41, message: "Too many MPN operations waiting in this session (at most \(settings.maxQueuedMPNOperations))"),
                now: now)
            return
        }
        let pending = SessionMPNState.Pending(id: mpn.nextId, origin: origin, requestId: requestId, operation: operation)
        mpn.nextId += 1
        mpn.waiting.append(pending)
        dispatchNextMPN()
    }

    mutating func dispatchNextMPN() {
        guard mpn.inFlight == nil, !mpn.waiting.isEmpty else { return }
        let next = mpn.waiting.removeFirst()
        mpn.inFlight = next
        output.actions.append(.handleMPN(MPNDispatch(id: next.id, operation: next.operation)))
    }

    /// The MPN Module finished an operation (committed on success).
    public mutating func mpnHandled(_ id: Int, _ result: Result<MPNOutcome, SessionRefusal>, now: Int64) -> [Action] {
        guard let pending = mpn.inFlight, pending.id == id else { return output.take() }
        mpn.inFlight = nil
        if !isClosed {
            switch result {
            case .success(let outcome):
                replyOK(pending.origin, pending.requestId, ack: true, now: now)
                switch outcome {
                case .registered(let deviceId, let adapterName):
                    mpn.devices.insert(deviceId)
                    emitData(.mpnreg(deviceId: deviceId, adapterName: adapterName), now: now)
                case .activated(let subId, let mpnId):
                    emitData(.mpnok(subscriptionId: subId, mpnSubscriptionId: mpnId), now: now)
                case .reconfigured(let mpnId):
                    emitData(.mpnconf(mpnSubscriptionId: mpnId), now: now)
                case .deactivated(let ids):
                    for mpnId in ids { emitData(.mpndel(mpnSubscriptionId: mpnId), now: now) }
                case .badgeReset(let deviceId):
                    emitData(.mpnzero(deviceId: deviceId), now: now)
                }
            case .failure(let refusal):
                replyError(pending.origin, pending.requestId, refusal, now: now)
            }
            dispatchNextMPN()
        }
        return output.take()
    }
}

extension ControlOperation {
    /// `PN_deviceId` of the MPN operations that need a registered device.
    var mpnDeviceId: String? {
        switch self {
        case .mpnResetBadge(let d): return d
        case .mpnActivate(let p): return p.deviceId
        case .mpnReconf(let p): return p.deviceId
        case .mpnDeactivate(let d, _): return d
        default: return nil
        }
    }
}
