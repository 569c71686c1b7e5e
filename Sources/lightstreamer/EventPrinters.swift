import Foundation
@_spi(Printing) import LightstreamerClient

/// Client callbacks as JSON events.
/// `@unchecked Sendable`: the client calls it from its serial callback queue only; the `on…` hooks are set before it is added.
final class ClientEventPrinter: ClientDelegate, @unchecked Sendable {
    /// Extra observers (the one-shot commands wait on these).
    var onStatus: ((LightstreamerClient.Status) -> Void)?
    var onServerError: ((Int, String) -> Void)?
    var printing = true

    func clientDidRemoveDelegate(_ client: LightstreamerClient) {}
    func clientDidAddDelegate(_ client: LightstreamerClient) {}

    func client(_ client: LightstreamerClient, didReceiveServerError errorCode: Int, withMessage errorMessage: String) {
        if printing { Output.json(["event": "server_error", "code": errorCode, "message": errorMessage]) }
        onServerError?(errorCode, errorMessage)
    }

    func client(_ client: LightstreamerClient, didChangeStatus status: LightstreamerClient.Status) {
        if printing { Output.json(["event": "status", "status": status.rawValue]) }
        onStatus?(status)
    }

    func client(_ client: LightstreamerClient, didChangeProperty property: String) {
        guard printing else { return }
        let d = client.connectionDetails
        let value: String?
        switch property {
        case "sessionId": value = d.sessionId
        case "serverSocketName": value = d.serverSocketName
        case "clientIp": value = d.clientIp
        case "serverInstanceAddress": value = d.serverInstanceAddress
        case "realMaxBandwidth":
            switch client.connectionOptions.realMaxBandwidth {
            case nil: value = nil
            case .unlimited?: value = "unlimited"
            case .unmanaged?: value = "unmanaged"
            case .limited(let v)?: value = v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
            }
        default: value = nil
        }
        Output.json(["event": "property", "name": property, "value": value])
    }
}

/// Subscription callbacks as JSON events.
/// `@unchecked Sendable`: the client calls it from its serial callback queue only; the `on…` hooks are set before it is added.
final class SubscriptionEventPrinter: SubscriptionDelegate, @unchecked Sendable {
    let name: String
    let names: Bool
    var onUpdate: ((ItemUpdate) -> Void)?
    var onFailure: ((Int, String?) -> Void)?
    /// A snapshot was cleared (the item's name, or its position).
    var onClear: ((String) -> Void)?
    var printing = true
    private var updateJSON = UpdateJSON()

    init(name: String, names: Bool) {
        self.name = name
        self.names = names
    }

    private func emit(_ o: [String: Any?]) { if printing { Output.json(o) } }

    func subscription(_ subscription: Subscription, didClearSnapshotForItemName itemName: String?, itemPos: UInt) {
        emit(["event": "clear_snapshot", "sub": name, "item": itemName, "pos": Int(itemPos)])
        onClear?(itemName ?? String(itemPos))
    }
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forCommandSecondLevelItemWithKey key: String) {
        emit(["event": "lost_updates", "sub": name, "item": key, "pos": nil, "lost": Int(lostUpdates)])
    }
    func subscription(
        _ subscription: Subscription, didFailWithErrorCode code: Int, message: String?, forCommandSecondLevelItemWithKey key: String
    ) {
        emit(["event": "second_level_error", "sub": name, "key": key, "code": code, "message": message])
    }
    func subscription(_ subscription: Subscription, didEndSnapshotForItemName itemName: String?, itemPos: UInt) {
        emit(["event": "end_of_snapshot", "sub": name, "item": itemName, "pos": Int(itemPos)])
    }
    func subscription(_ subscription: Subscription, didLoseUpdates lostUpdates: UInt, forItemName itemName: String?, itemPos: UInt) {
        emit(["event": "lost_updates", "sub": name, "item": itemName, "pos": Int(itemPos), "lost": Int(lostUpdates)])
    }
    func subscription(_ subscription: Subscription, didUpdateItem itemUpdate: ItemUpdate) {
        if printing { Output.write { updateJSON.write(&$0, sub: name, itemUpdate, names: names) } }
        onUpdate?(itemUpdate)
    }
    func subscriptionDidRemoveDelegate(_ subscription: Subscription) {}
    func subscriptionDidAddDelegate(_ subscription: Subscription) {}
    func subscriptionDidSubscribe(_ subscription: Subscription) { emit(["event": "subscribed", "sub": name]) }
    func subscription(_ subscription: Subscription, didFailWithErrorCode code: Int, message: String?) {
        emit(["event": "subscription_error", "sub": name, "code": code, "message": message])
        onFailure?(code, message)
    }
    func subscriptionDidUnsubscribe(_ subscription: Subscription) { emit(["event": "unsubscribed", "sub": name]) }
    func subscription(_ subscription: Subscription, didReceiveRealFrequency frequency: RealMaxFrequency?) {
        emit(["event": "real_max_frequency", "sub": name, "value": EventJSON.frequency(frequency)])
    }
}

/// Message outcomes as JSON events.
/// `@unchecked Sendable`: the client calls it from its serial callback queue only.
final class MessageEventPrinter: ClientMessageDelegate, @unchecked Sendable {
    let name: String
    var onOutcome: ((String, Int?) -> Void)?
    var printing = true

    init(name: String) { self.name = name }

    private func emit(_ o: [String: Any?], _ kind: String, _ code: Int? = nil) {
        if printing { Output.json(o) }
        onOutcome?(kind, code)
    }

    func client(_ client: LightstreamerClient, didAbortMessage originalMessage: String, sentOnNetwork: Bool) {
        emit(["event": "message_aborted", "msg": name, "sent_on_network": sentOnNetwork], "aborted")
    }
    func client(_ client: LightstreamerClient, didDenyMessage originalMessage: String, withCode code: Int, error: String) {
        emit(["event": "message_denied", "msg": name, "code": code, "message": error], "denied", code)
    }
    func client(_ client: LightstreamerClient, didDiscardMessage originalMessage: String) {
        emit(["event": "message_discarded", "msg": name], "discarded")
    }
    func client(_ client: LightstreamerClient, didFailMessage originalMessage: String) {
        emit(["event": "message_error", "msg": name], "error")
    }
    func client(_ client: LightstreamerClient, didProcessMessage originalMessage: String, withResponse response: String) {
        emit(["event": "message_processed", "msg": name, "response": response], "processed")
    }
}
