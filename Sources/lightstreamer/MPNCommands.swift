import ArgumentParser
import Foundation
import LightstreamerClient

/// `lightstreamer mpn register|subscribe|list|unsubscribe|reset-badge`.
struct MPNCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mpn", abstract: "Mobile push notifications: register a device, manage its MPN subscriptions.",
        subcommands: [
            MPNRegisterCommand.self, MPNSubscribeCommand.self, MPNListCommand.self, MPNUnsubscribeCommand.self,
            MPNResetBadgeCommand.self,
        ])
}

/// Options shared by the `mpn` subcommands.
struct MPNDeviceArguments: ParsableArguments {
    @OptionGroup var connection: ConnectionArguments
    @Option(
        name: .customLong("device-token"),
        help: ArgumentHelp(
            "The device token (hexadecimal for Apple).",
            discussion: "By default each token is a device of its own: a token never seen before registers a new device.")) var deviceToken:
        String
    @Option(name: .customLong("app-id"), help: "The application id.") var appId: String
    @Option(help: "Apple or Google.") var platform = "Apple"
    @Option(help: "Give up after S seconds.") var timeout: Double = 15
    @Flag(help: "Print JSON.") var json = false
    @Flag(
        name: .customLong("replace-stored-token"),
        help: ArgumentHelp(
            "Send --device-token as the new token of the device last registered from this machine for this --app-id "
                + "and --platform (a token change), instead of registering it as a device of its own.",
            discussion: "The last token used is kept in $LS_MPN_STORE_DIR (default ~/.config/lightstreamer/mpn)."))
    var replaceStoredToken = false

    func validate() throws {
        guard platform == "Apple" || platform == "Google" else { throw ValidationError("--platform must be Apple or Google") }
        guard !deviceToken.isEmpty, !appId.isEmpty else { throw ValidationError("--device-token and --app-id must not be empty") }
    }
}

/// Connects, registers the device and runs `body` once the device (and, when asked, its list
/// of MPN subscriptions) is known; `body` finishes the completion.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
final class MPNRun: @unchecked Sendable {
    let client: LightstreamerClient
    let device: MPNDevice
    let done = Completion()
    let args: MPNDeviceArguments
    private let deviceEvents = MPNDeviceEventPrinter()
    private let clientEvents = ClientEventPrinter()
    private var started = false
    private let lock = NSLock()

    init(_ args: MPNDeviceArguments) {
        self.args = args
        client = args.connection.makeClient()
        device = Self.makeDevice(args, store: .default)
    }

    /// The device of a command. By default it is keyed by its token: no previous token is sent,
    /// so a new token registers a new device. The token is still recorded as the app's last one,
    /// and with `--replace-stored-token` the recorded token is sent as the previous one (the
    /// library's token-change behaviour).
    static func makeDevice(_ args: MPNDeviceArguments, store: MPNTokenStore) -> MPNDevice {
        if args.replaceStoredToken {
            return MPNDevice(deviceToken: args.deviceToken, applicationId: args.appId, platform: args.platform, tokenStore: store)
        }
        store.store(args.deviceToken, platform: args.platform, applicationId: args.appId)
        return MPNDevice(deviceToken: args.deviceToken, applicationId: args.appId, platform: args.platform, tokenStore: nil)
    }

    /// `waitForList`: start after `mpnDeviceDidUpdateSubscriptions` instead of registration.
    func run(waitForList: Bool, _ body: @escaping (MPNRun) -> Void) -> Int32 {
        clientEvents.printing = false
        clientEvents.onStatus = { [done] in done.statusChanged($0.rawValue) }
        clientEvents.onServerError = { [done] code, message in
            Output.error("Refused by the server: \(code) \(message)")
            done.finish(ExitStatus.refused)
        }
        client.addDelegate(clientEvents)
        deviceEvents.printing = false
        deviceEvents.onFailure = { event, code, message in
            if event == "mpn_device_registration_failed" { Output.refused("Registration", code: code, message: message) }
        }
        // Strong on purpose: the run object lives as long as the command.
        deviceEvents.onEvent = { [self] event, _ in
            switch event {
            case "mpn_device_registration_failed":
                self.done.finish(ExitStatus.refused)
            case "mpn_device_registered" where !waitForList, "mpn_subscriptions_updated" where waitForList:
                let first: Bool = self.lock.withLock {
                    defer { self.started = true }
                    return !self.started
                }
                if first { body(self) }
            default: break
            }
        }
        device.addDelegate(deviceEvents)
        client.register(forMPN: device)
        client.connect()
        let code = done.wait(seconds: args.timeout)
        client.disconnect()
        Thread.sleep(forTimeInterval: 0.1)
        return code
    }

    static func describe(_ s: MPNSubscription) -> [String: Any?] {
        [
            "id": s.subscriptionId, "status": s.status.rawValue, "status_timestamp": s.statusTimestamp, "mode": s.mode.rawValue,
            "group": s.itemGroup ?? s.items?.joined(separator: " "), "schema": s.fieldSchema ?? s.fields?.joined(separator: " "),
            "adapter": s.dataAdapter, "format": s.actualNotificationFormat ?? s.notificationFormat,
            "trigger": s.actualTriggerExpression ?? s.triggerExpression,
        ]
    }

    func print(_ object: [String: Any?], text: String) {
        if args.json { Output.json(object) } else { Output.line(text) }
    }
}

struct MPNRegisterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "register", abstract: "Register the device; print its id.")
    @OptionGroup var device: MPNDeviceArguments

    func run() throws {
        let code = MPNRun(device).run(waitForList: false) { r in
            r.print(
                ["device_id": r.device.deviceId, "status": r.device.status.rawValue],
                text: "\(r.device.deviceId ?? "-") \(r.device.status.rawValue)")
            r.done.finish(ExitStatus.done)
        }
        throw ExitCode(code)
    }
}

struct MPNSubscribeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "subscribe", abstract: "Activate an MPN subscription; print its id.")
    @OptionGroup var device: MPNDeviceArguments
    @Option(help: "MERGE or DISTINCT.") var mode = "MERGE"
    @OptionGroup var what: ItemArguments
    @Option(name: .customLong("buffer-size"), help: "N or unlimited.") var bufferSize: String?
    @Option(name: .customLong("max-frequency"), help: "Updates per second, or unlimited.") var maxFrequency: String?
    @Option(help: "The notification format (JSON).") var format: String
    // `.unconditional`: an expression may start with `-` (`-1 < Double.parseDouble(${x})`).
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Trigger expression (Java syntax).",
            discussion: "The next argument is taken whole, even when it starts with '-'; --trigger=EXPR works too."))
    var trigger: String?
    @Flag(help: "Coalesce with an equal MPN subscription.") var coalescing = false

    var options: MPNRequestOptions {
        MPNRequestOptions(
            mode: mode, items: what.itemList, group: what.group, fields: what.fieldList, schema: what.schema,
            format: format, trigger: trigger, dataAdapter: what.dataAdapter, bufferSize: bufferSize,
            maxFrequency: maxFrequency)
    }

    func validate() throws {
        do { _ = try options.make() } catch let e as SessionDriver.CommandError { throw ValidationError(e.message) }
    }

    func run() throws {
        let sub = try options.make()
        let coalescing = coalescing
        let format = format
        let trigger = trigger
        let code = MPNRun(device).run(waitForList: false) { r in
            let printer = MPNSubscriptionEventPrinter(name: "mpn")
            printer.printing = false
            printer.onFailure = { event, code, message in
                guard event == "mpn_subscription_failed", !r.done.finished else { return }
                Output.refused("MPN subscription", code: code, message: message)
            }
            printer.onEvent = { event, s in
                // One outcome: a new session (Stream-Sense, retry) restores the subscription
                // and reports it subscribed again.
                guard !r.done.finished else { return }
                switch event {
                case "mpn_subscribed":
                    // The server's values come later (SUB- item): until then, the requested ones.
                    var d = MPNRun.describe(s)
                    if (d["format"] ?? nil) == nil { d["format"] = format }
                    if (d["trigger"] ?? nil) == nil { d["trigger"] = trigger }
                    r.print(d, text: "\(s.subscriptionId ?? "-") \(s.status.rawValue)")
                    r.done.finish(ExitStatus.done)
                case "mpn_subscription_failed":
                    r.done.finish(ExitStatus.refused)
                default: break
                }
            }
            sub.addDelegate(printer)
            r.client.subscribeMPN(sub, coalescing: coalescing)
        }
        throw ExitCode(code)
    }
}

struct MPNListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the device's MPN subscriptions.")
    @OptionGroup var device: MPNDeviceArguments
    @Option(help: "ALL, SUBSCRIBED or TRIGGERED.") var status = "ALL"

    func validate() throws {
        if (try? MPNSessionDriver.parseFilter(status)) == nil { throw ValidationError("Invalid --status '\(status)'") }
    }

    func run() throws {
        let filter = try MPNSessionDriver.parseFilter(status)
        let code = MPNRun(device).run(waitForList: true) { r in
            for s in r.client.filterMPNSubscriptions(filter) {
                r.print(
                    MPNRun.describe(s),
                    text: "\(s.subscriptionId ?? "-") \(s.status.rawValue) \(s.itemGroup ?? "") \(s.fieldSchema ?? "") "
                        + "trigger=\(s.triggerExpression ?? "-") format=\(s.notificationFormat ?? "-")")
            }
            r.done.finish(ExitStatus.done)
        }
        throw ExitCode(code)
    }
}

struct MPNUnsubscribeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unsubscribe",
        abstract: "Deactivate one MPN subscription, or all in a status.")
    @OptionGroup var device: MPNDeviceArguments
    @Argument(help: "The MPN subscription id.") var id: String?
    @Option(help: "ALL, SUBSCRIBED or TRIGGERED (instead of an id).") var status: String?

    func validate() throws {
        guard (id == nil) != (status == nil) else { throw ValidationError("Give a subscription id or --status") }
        if let status, (try? MPNSessionDriver.parseFilter(status)) == nil { throw ValidationError("Invalid --status '\(status)'") }
    }

    func run() throws {
        let id = id
        let filter = try status.map { try MPNSessionDriver.parseFilter($0) }
        let code = MPNRun(device).run(waitForList: true) { r in
            if let id {
                guard let s = r.client.findMPNSubscription(id) else {
                    Output.error("No MPN subscription \(id)")
                    r.done.finish(ExitStatus.refused)
                    return
                }
                let printer = MPNSubscriptionEventPrinter(name: "mpn")
                printer.printing = false
                printer.onFailure = { event, code, message in
                    if event == "mpn_unsubscription_failed" { Output.refused("MPN unsubscription", code: code, message: message) }
                }
                printer.onEvent = { event, _ in
                    if event == "mpn_unsubscribed" {
                        r.print(["id": id, "status": "UNKNOWN"], text: "\(id) UNKNOWN")
                        r.done.finish(ExitStatus.done)
                    } else if event == "mpn_unsubscription_failed" {
                        r.done.finish(ExitStatus.refused)
                    }
                }
                s.addDelegate(printer)
                r.client.unsubscribeMPN(s)
            } else if let filter {
                let targets = r.client.filterMPNSubscriptions(filter).compactMap(\.subscriptionId)
                r.client.unsubscribeMultipleMPN(filter)
                DispatchQueue.global().async {
                    // MPNDEL arrives once per subscription removed, with no end marker.
                    while !r.client.filterMPNSubscriptions(filter).isEmpty { Thread.sleep(forTimeInterval: 0.05) }
                    for t in targets { r.print(["id": t, "status": "UNKNOWN"], text: "\(t) UNKNOWN") }
                    r.done.finish(ExitStatus.done)
                }
            }
        }
        throw ExitCode(code)
    }
}

struct MPNResetBadgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "reset-badge", abstract: "Reset the device's badge.")
    @OptionGroup var device: MPNDeviceArguments

    func run() throws {
        let run = MPNRun(device)
        let printer = MPNDeviceEventPrinter()
        printer.printing = false
        printer.onFailure = { event, code, message in
            if event == "mpn_badge_reset_failed" { Output.refused("Badge reset", code: code, message: message) }
        }
        printer.onEvent = { event, _ in
            if event == "mpn_badge_reset" {
                run.print(["badge_reset": true], text: "badge reset")
                run.done.finish(ExitStatus.done)
            } else if event == "mpn_badge_reset_failed" {
                run.done.finish(ExitStatus.refused)
            }
        }
        run.device.addDelegate(printer)
        let code = run.run(waitForList: false) { r in r.client.resetMPNBadge() }
        throw ExitCode(code)
    }
}

extension MPNSessionDriver {
    static func parseFilter(_ s: String) throws -> LightstreamerClient.MPNSubscriptionStatus {
        switch s {
        case "ALL": return .ALL
        case "SUBSCRIBED": return .SUBSCRIBED
        case "TRIGGERED": return .TRIGGERED
        default: throw SessionDriver.CommandError("Invalid filter '\(s)'")
        }
    }
}
