import Foundation
import LightstreamerClient

/// The MPN commands of `lightstreamer session` (docs/protocol/CLI.md): checks every precondition
/// the API would trap on and reports it as an `error` event instead.
/// `@unchecked Sendable`: changed only by the stdin command loop, one line at a time; callbacks go to the printers.
final class MPNSessionDriver: @unchecked Sendable {
    typealias CommandError = SessionDriver.CommandError

    let client: LightstreamerClient
    private var device: MPNDevice?
    private let deviceEvents = MPNDeviceEventPrinter()
    private var subscriptions: [String: MPNSubscription] = [:]
    private var printers: [String: MPNSubscriptionEventPrinter] = [:]

    init(client: LightstreamerClient) {
        self.client = client
    }

    func handle(_ name: String, _ cmd: [String: Any]) throws {
        switch name {
        case "mpn_register": try register(cmd)
        case "mpn_subscribe": try subscribe(cmd)
        case "mpn_unsubscribe":
            try requireDevice()
            let s = try subscription(cmd)
            guard s.isActive else { throw CommandError("MPN subscription is not active") }
            client.unsubscribeMPN(s)
        case "mpn_unsubscribe_filter":
            try requireDevice()
            client.unsubscribeMultipleMPN(try filter(cmd["filter"]))
        case "mpn_set_format":
            let s = try subscription(cmd)
            s.notificationFormat = try text(cmd, "format")
        case "mpn_set_trigger":
            let s = try subscription(cmd)
            let v = cmd["trigger"]
            if v == nil || v is NSNull { s.triggerExpression = nil } else { s.triggerExpression = try text(cmd, "trigger") }
        case "mpn_reset_badge":
            try requireDevice()
            client.resetMPNBadge()
        default:
            throw CommandError("Unknown command '\(name)'")
        }
    }

    private func requireDevice() throws {
        guard device != nil else { throw CommandError("No MPNDevice Registered") }
    }

    private func text(_ cmd: [String: Any], _ key: String) throws -> String {
        guard let v = cmd[key] as? String else { throw CommandError("Missing string '\(key)'") }
        return v
    }

    private func optional(_ cmd: [String: Any], _ key: String) -> String? {
        guard let v = cmd[key], !(v is NSNull) else { return nil }
        return v as? String ?? "\(v)"
    }

    private func list(_ cmd: [String: Any], _ key: String) throws -> [String]? {
        guard let v = cmd[key], !(v is NSNull) else { return nil }
        guard let l = v as? [Any] else { throw CommandError("'\(key)' must be a list") }
        return l.map { "\($0)" }
    }

    private func subscription(_ cmd: [String: Any]) throws -> MPNSubscription {
        let name = try text(cmd, "mpn")
        guard let s = subscriptions[name] else { throw CommandError("Unknown MPN subscription '\(name)'") }
        return s
    }

    func filter(_ v: Any?) throws -> LightstreamerClient.MPNSubscriptionStatus {
        switch v as? String {
        case nil, "ALL"?: return .ALL
        case "SUBSCRIBED"?: return .SUBSCRIBED
        case "TRIGGERED"?: return .TRIGGERED
        default: throw CommandError("Invalid filter '\(v.map { "\($0)" } ?? "")'")
        }
    }

    private func register(_ cmd: [String: Any]) throws {
        let platform = optional(cmd, "platform") ?? "Apple"
        guard platform == "Apple" || platform == "Google" else { throw CommandError("Invalid platform '\(platform)'") }
        let appId = try text(cmd, "app_id")
        let token = try text(cmd, "token")
        guard !appId.isEmpty, !token.isEmpty else { throw CommandError("Empty app_id or token") }
        // Keyed by token, as in `lightstreamer mpn`: `replace_stored_token` sends the token as the
        // new one of the device last registered for this app (a token change).
        let replace = (cmd["replace_stored_token"] as? Bool) ?? false
        let store = MPNTokenStore.default
        if !replace { store.store(token, platform: platform, applicationId: appId) }
        let d = MPNDevice(deviceToken: token, applicationId: appId, platform: platform, tokenStore: replace ? store : nil)
        d.addDelegate(deviceEvents)
        device = d
        client.register(forMPN: d)
    }

    private func subscribe(_ cmd: [String: Any]) throws {
        try requireDevice()
        let name = try text(cmd, "mpn")
        if let old = subscriptions[name], old.isActive { throw CommandError("MPN subscription '\(name)' is active") }
        let s = try MPNRequestOptions(
            mode: try text(cmd, "mode"), items: try list(cmd, "items"), group: optional(cmd, "group"), fields: try list(cmd, "fields"),
            schema: optional(cmd, "schema"), format: optional(cmd, "format"), trigger: optional(cmd, "trigger"),
            dataAdapter: optional(cmd, "data_adapter"), bufferSize: optional(cmd, "buffer_size"),
            maxFrequency: optional(cmd, "max_frequency")
        ).make()
        let printer = MPNSubscriptionEventPrinter(name: name)
        s.addDelegate(printer)
        subscriptions[name] = s
        printers[name] = printer
        client.subscribeMPN(s, coalescing: (cmd["coalescing"] as? Bool) ?? false)
    }
}

/// An `MPNSubscription` from command options, every precondition checked first.
struct MPNRequestOptions {
    var mode: String
    var items: [String]?
    var group: String?
    var fields: [String]?
    var schema: String?
    var format: String?
    var trigger: String?
    var dataAdapter: String?
    var bufferSize: String?
    var maxFrequency: String?

    func make() throws -> MPNSubscription {
        typealias E = SessionDriver.CommandError
        guard let m = MPNSubscription.Mode(rawValue: mode) else { throw E("Invalid MPN mode '\(mode)' (MERGE or DISTINCT)") }
        guard items != nil || group != nil else { throw E("Specify property 'items' or 'itemGroup'") }
        guard fields != nil || schema != nil else { throw E("Specify property 'fields' or 'fieldSchema'") }
        guard let format, !format.isEmpty else { throw E("Specify property 'notificationFormat'") }
        let s = MPNSubscription(subscriptionMode: m)
        if let items {
            guard !items.isEmpty, items.allSatisfy({ !$0.isEmpty && !$0.contains(" ") && Int($0) == nil }) else {
                throw E("Invalid item list")
            }
            s.items = items
        } else if let group {
            guard !group.isEmpty else { throw E("Empty item group") }
            s.itemGroup = group
        }
        if let fields {
            guard !fields.isEmpty, fields.allSatisfy({ !$0.isEmpty && !$0.contains(" ") }) else { throw E("Invalid field list") }
            s.fields = fields
        } else if let schema {
            guard !schema.isEmpty else { throw E("Empty field schema") }
            s.fieldSchema = schema
        }
        if let dataAdapter {
            guard !dataAdapter.isEmpty else { throw E("Empty data adapter") }
            s.dataAdapter = dataAdapter
        }
        if let bufferSize {
            if bufferSize == "unlimited" {
                s.requestedBufferSize = .unlimited
            } else if let n = Int(bufferSize), n > 0 {
                s.requestedBufferSize = .limited(n)
            } else {
                throw E("Invalid buffer size '\(bufferSize)'")
            }
        }
        if let maxFrequency {
            if maxFrequency == "unlimited" {
                s.requestedMaxFrequency = .unlimited
            } else if let f = Double(maxFrequency), f > 0 {
                s.requestedMaxFrequency = .limited(f)
            } else {
                throw E("Invalid max frequency '\(maxFrequency)'")
            }
        }
        s.notificationFormat = format
        s.triggerExpression = trigger
        return s
    }
}

/// Device callbacks as JSON events.
/// `@unchecked Sendable`: the client calls it from its serial callback queue only.
final class MPNDeviceEventPrinter: MPNDeviceDelegate, @unchecked Sendable {
    var printing = true
    var onEvent: ((String, MPNDevice) -> Void)?
    /// A refusal: the event name, the server's code and message (called before `onEvent`).
    var onFailure: ((String, Int, String?) -> Void)?

    private func emit(_ o: [String: Any?], _ d: MPNDevice) {
        if printing { Output.json(o) }
        onEvent?(o["event"] as? String ?? "", d)
    }

    func mpnDeviceDidAddDelegate(_ device: MPNDevice) {}
    func mpnDeviceDidRemoveDelegate(_ device: MPNDevice) {}
    func mpnDeviceDidRegister(_ device: MPNDevice) { emit(["event": "mpn_device_registered", "device_id": device.deviceId], device) }
    func mpnDeviceDidSuspend(_ device: MPNDevice) { emit(["event": "mpn_device_suspended"], device) }
    func mpnDeviceDidResume(_ device: MPNDevice) { emit(["event": "mpn_device_resumed"], device) }
    func mpnDevice(_ device: MPNDevice, didFailRegistrationWithErrorCode code: Int, message: String?) {
        onFailure?("mpn_device_registration_failed", code, message)
        emit(["event": "mpn_device_registration_failed", "code": code, "message": message], device)
    }
    func mpnDevice(_ device: MPNDevice, didChangeStatus status: MPNDevice.Status, timestamp: Int64) {
        emit(["event": "mpn_device_status", "status": status.rawValue, "timestamp": timestamp], device)
    }
    func mpnDeviceDidUpdateSubscriptions(_ device: MPNDevice) { emit(["event": "mpn_subscriptions_updated"], device) }
    func mpnDeviceDidResetBadge(_ device: MPNDevice) { emit(["event": "mpn_badge_reset"], device) }
    func mpnDevice(_ device: MPNDevice, didFailBadgeResetWithErrorCode code: Int, message: String?) {
        onFailure?("mpn_badge_reset_failed", code, message)
        emit(["event": "mpn_badge_reset_failed", "code": code, "message": message], device)
    }
}

/// MPN subscription callbacks as JSON events.
/// `@unchecked Sendable`: the client calls it from its serial callback queue only.
final class MPNSubscriptionEventPrinter: MPNSubscriptionDelegate, @unchecked Sendable {
    let name: String
    var printing = true
    var onEvent: ((String, MPNSubscription) -> Void)?
    /// A refusal: the event name, the server's code and message (called before `onEvent`).
    var onFailure: ((String, Int, String?) -> Void)?

    init(name: String) {
        self.name = name
    }

    private func emit(_ o: [String: Any?], _ s: MPNSubscription) {
        var o = o
        o["mpn"] = name
        if printing { Output.json(o) }
        onEvent?(o["event"] as? String ?? "", s)
    }

    func mpnSubscriptionDidAddDelegate(_ subscription: MPNSubscription) {}
    func mpnSubscriptionDidRemoveDelegate(_ subscription: MPNSubscription) {}
    func mpnSubscriptionDidSubscribe(_ s: MPNSubscription) { emit(["event": "mpn_subscribed", "id": s.subscriptionId], s) }
    func mpnSubscriptionDidUnsubscribe(_ s: MPNSubscription) { emit(["event": "mpn_unsubscribed"], s) }
    func mpnSubscription(_ s: MPNSubscription, didFailSubscriptionWithErrorCode code: Int, message: String?) {
        onFailure?("mpn_subscription_failed", code, message)
        emit(["event": "mpn_subscription_failed", "code": code, "message": message], s)
    }
    func mpnSubscription(_ s: MPNSubscription, didFailUnsubscriptionWithErrorCode code: Int, message: String?) {
        onFailure?("mpn_unsubscription_failed", code, message)
        emit(["event": "mpn_unsubscription_failed", "code": code, "message": message], s)
    }
    func mpnSubscriptionDidTrigger(_ s: MPNSubscription) { emit(["event": "mpn_triggered"], s) }
    func mpnSubscription(_ s: MPNSubscription, didChangeStatus status: MPNSubscription.Status, timestamp: Int64) {
        emit(["event": "mpn_status", "status": status.rawValue, "timestamp": timestamp], s)
    }
    func mpnSubscription(_ s: MPNSubscription, didChangeProperty property: String) {
        emit(["event": "mpn_property", "name": property], s)
    }
    func mpnSubscription(_ s: MPNSubscription, didFailModificationWithErrorCode code: Int, message: String?, property: String) {
        emit(["event": "mpn_modification_failed", "code": code, "message": message, "property": property], s)
    }
}
