import ArgumentParser
import Foundation
import LightstreamerClient

/// `lightstreamer session`: JSON commands on stdin, every callback as a JSON event on stdout
/// (docs/protocol/CLI.md).
struct SessionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Drive a client with JSON commands on stdin; print events on stdout.")

    @OptionGroup var connection: ConnectionArguments

    func run() throws {
        let client = connection.makeClient()
        let driver = SessionDriver(client: client)
        client.addDelegate(driver.clientEvents)
        Output.json(["event": "ready"])
        while let line = readLine(strippingNewline: true) {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            if driver.handle(line) == .exit { break }
        }
        // Let queued callbacks reach stdout before exiting.
        Thread.sleep(forTimeInterval: 0.1)
        throw ExitCode(ExitStatus.done)
    }
}

/// Carries out session commands.
/// `@unchecked Sendable`: changed only by the stdin command loop, one line at a time; callbacks go to the printers.
final class SessionDriver: @unchecked Sendable {
    enum Outcome { case next, exit }

    let client: LightstreamerClient
    let clientEvents = ClientEventPrinter()
    private var subscriptions: [String: Subscription] = [:]
    private var subscriptionPrinters: [String: SubscriptionEventPrinter] = [:]
    private lazy var mpnDriver = MPNSessionDriver(client: client)

    init(client: LightstreamerClient) {
        self.client = client
    }

    func handle(_ line: String) -> Outcome {
        guard let data = line.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data), let cmd = object as? [String: Any]
        else {
            Output.json(["event": "error", "message": "Bad JSON command"])
            return .next
        }
        guard let name = cmd["cmd"] as? String else {
            Output.json(["event": "error", "message": "Missing 'cmd'"])
            return .next
        }
        do {
            switch name {
            case "connect": client.connect()
            case "disconnect": client.disconnect()
            case "exit": return .exit
            case "subscribe": try subscribe(cmd)
            case "unsubscribe":
                let sub = try string(cmd, "sub")
                guard let s = subscriptions.removeValue(forKey: sub) else { throw CommandError("Unknown subscription '\(sub)'") }
                client.unsubscribe(s)
            case "set_max_frequency":
                let sub = try string(cmd, "sub")
                guard let s = subscriptions[sub] else { throw CommandError("Unknown subscription '\(sub)'") }
                let value = cmd["value"].map { "\($0)" } ?? ""
                guard s.mode != .RAW, let f = SubscriptionRequest.frequency(value) else {
                    throw CommandError("Invalid frequency '\(value)'")
                }
                if s.isActive {
                    guard let old = s.requestedMaxFrequency, old != .unfiltered, f != .unfiltered else {
                        throw CommandError("Cannot change the frequency from/to unfiltered while active")
                    }
                }
                s.requestedMaxFrequency = f
            case "send_message": try sendMessage(cmd)
            case "set_option": try setOption(cmd)
            case let mpn where mpn.hasPrefix("mpn_"):
                try mpnDriver.handle(mpn, cmd)
            default:
                throw CommandError("Unknown command '\(name)'")
            }
        } catch let e as CommandError {
            Output.json(["event": "error", "message": e.message])
        } catch {
            Output.json(["event": "error", "message": "\(error)"])
        }
        return .next
    }

    struct CommandError: Error {
        let message: String
        init(_ m: String) { message = m }
    }

    private func string(_ cmd: [String: Any], _ key: String) throws -> String {
        guard let v = cmd[key] as? String else { throw CommandError("Missing string '\(key)'") }
        return v
    }

    private func optionalString(_ cmd: [String: Any], _ key: String) -> String? {
        guard let v = cmd[key], !(v is NSNull) else { return nil }
        if let s = v as? String { return s }
        return "\(v)"
    }

    private func list(_ cmd: [String: Any], _ key: String) throws -> [String]? {
        guard let v = cmd[key], !(v is NSNull) else { return nil }
        guard let l = v as? [Any] else { throw CommandError("'\(key)' must be a list") }
        return l.map { "\($0)" }
    }

    private func subscribe(_ cmd: [String: Any]) throws {
        let name = try string(cmd, "sub")
        if let old = subscriptions[name], old.isActive { throw CommandError("Subscription '\(name)' is active") }
        let request = SubscriptionRequest(
            mode: try string(cmd, "mode"), items: try list(cmd, "items"), group: optionalString(cmd, "group"),
            fields: try list(cmd, "fields"), schema: optionalString(cmd, "schema"), dataAdapter: optionalString(cmd, "data_adapter"),
            snapshot: optionalString(cmd, "snapshot"), maxFrequency: optionalString(cmd, "max_frequency"),
            bufferSize: optionalString(cmd, "buffer_size"), selector: optionalString(cmd, "selector"),
            secondLevelFields: try list(cmd, "second_level_fields"), secondLevelSchema: optionalString(cmd, "second_level_schema"),
            secondLevelAdapter: optionalString(cmd, "second_level_adapter"))
        let sub: Subscription
        do {
            sub = try request.make()
        } catch {
            throw CommandError(error.message)
        }
        let printer = SubscriptionEventPrinter(
            name: name,
            names: sub.fields != nil
                && (sub.mode != .COMMAND
                    || (request.secondLevelFields != nil || request.secondLevelSchema == nil))
        )
        sub.addDelegate(printer)
        subscriptions[name] = sub
        subscriptionPrinters[name] = printer
        client.subscribe(sub)
    }

    private func sendMessage(_ cmd: [String: Any]) throws {
        let name = optionalString(cmd, "msg") ?? ""
        let text = try string(cmd, "message")
        let sequence = optionalString(cmd, "sequence")
        if let sequence,
            !sequence.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        {
            throw CommandError("Invalid sequence '\(sequence)'")
        }
        let timeout = (cmd["timeout_ms"] as? Int) ?? -1
        let listener = (cmd["listener"] as? Bool) ?? true
        let enqueue = (cmd["enqueue"] as? Bool) ?? false
        client.sendMessage(
            text, withSequence: sequence, timeout: timeout,
            delegate: listener ? MessageEventPrinter(name: name) : nil, enqueueWhileDisconnected: enqueue)
    }

    private func setOption(_ cmd: [String: Any]) throws {
        let name = try string(cmd, "name")
        let raw = cmd["value"]
        let text = raw.map { "\($0)" } ?? ""
        let o = client.connectionOptions
        func millis(strict: Bool) throws -> Int {
            guard let v = (raw as? Int) ?? Int(text), strict ? v > 0 : v >= 0 else { throw CommandError("Invalid value for \(name)") }
            return v
        }
        switch name {
        case "transport":
            if raw == nil || raw is NSNull {
                o.forcedTransport = nil
                return
            }
            guard let t = TransportSelection(rawValue: text) else { throw CommandError("Invalid transport '\(text)'") }
            o.forcedTransport = t
        case "content_length":
            guard let v = UInt64(text), v > 0 else { throw CommandError("Invalid content length") }
            o.contentLength = v
        case "keepalive_ms": o.keepaliveInterval = try millis(strict: false)
        case "idle_timeout_ms": o.idleTimeout = try millis(strict: false)
        case "polling_interval_ms": o.pollingInterval = try millis(strict: false)
        case "retry_delay_ms": o.retryDelay = try millis(strict: true)
        case "first_retry_max_delay_ms": o.firstRetryMaxDelay = try millis(strict: true)
        case "reconnect_timeout_ms": o.reconnectTimeout = try millis(strict: true)
        case "stalled_timeout_ms": o.stalledTimeout = try millis(strict: true)
        case "session_recovery_timeout_ms": o.sessionRecoveryTimeout = try millis(strict: false)
        case "reverse_heartbeat_ms": o.reverseHeartbeatInterval = try millis(strict: false)
        case "requested_max_bandwidth":
            guard let b = OptionValue.bandwidth(text) else { throw CommandError("Invalid bandwidth '\(text)'") }
            o.requestedMaxBandwidth = b
        case "slowing": o.slowingEnabled = (raw as? Bool) ?? (text == "true")
        case "server_instance_address_ignored": o.serverInstanceAddressIgnored = (raw as? Bool) ?? (text == "true")
        default:
            throw CommandError("Unknown option '\(name)'")
        }
    }
}
