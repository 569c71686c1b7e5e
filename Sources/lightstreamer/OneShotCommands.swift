import ArgumentParser
import Foundation
@_spi(Printing) import LightstreamerClient

/// Waits for the end of a one-shot command: the first `finish` wins.
/// `@unchecked Sendable`: its mutable state is only touched under `lock`.
final class Completion: @unchecked Sendable {
    private let lock = NSLock()
    private let semaphore = DispatchSemaphore(value: 0)
    private var code: Int32?
    private var everConnected = false
    private var lastStatus = "DISCONNECTED"
    /// Called before a message is written on stderr (the live table gives the terminal back first).
    var beforeMessage: (() -> Void)?

    /// An outcome is known: later events must not print another one.
    var finished: Bool { lock.withLock { code != nil } }

    func finish(_ c: Int32) {
        let first: Bool = lock.withLock {
            guard code == nil else { return false }
            code = c
            return true
        }
        if first { semaphore.signal() }
    }

    /// Follows the client's status (`client(_:didChangeStatus:)`).
    func statusChanged(_ status: String) {
        lock.withLock {
            lastStatus = status
            if status.hasPrefix("CONNECTED") { everConnected = true }
        }
    }

    /// The exit code. When the time runs out with no outcome: 1 (timeout) while connected,
    /// else 3, with what happened to the connection on stderr (the server could not be reached,
    /// or the connection to it was lost and not regained).
    func wait(seconds: Double?) -> Int32 {
        let result: DispatchTimeoutResult
        if let seconds {
            result = semaphore.wait(timeout: .now() + seconds)
        } else {
            semaphore.wait()
            result = .success
        }
        let (exit, message): (Int32, String?) = lock.withLock {
            guard result == .timedOut, code == nil else { return (code ?? ExitStatus.done, nil) }
            let outcome = Self.timeoutOutcome(everConnected: everConnected, status: lastStatus, seconds: seconds ?? 0)
            code = outcome.code
            return outcome
        }
        if let message {
            beforeMessage?()
            Output.error(message)
        }
        return exit
    }

    /// What a command that ran out of time reports, from the client's status at that moment.
    static func timeoutOutcome(everConnected: Bool, status: String, seconds: Double) -> (code: Int32, message: String?) {
        if status.hasPrefix("CONNECTED") { return (ExitStatus.timeout, nil) }
        let after = seconds == seconds.rounded() && abs(seconds) < 1e9 ? "\(Int(seconds)) s" : "\(seconds) s"
        if everConnected {
            return (
                ExitStatus.noSession,
                "connection to the server lost: status \(status) when the \(after) timeout ran out "
                    + "(the server closed the connection or stopped answering, and no new session could be made)"
            )
        }
        return (
            ExitStatus.noSession,
            "no session with the server within \(after) (status \(status); "
                + "it could not be reached or did not answer)"
        )
    }
}

struct SubscribeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "subscribe", abstract: "Subscribe and print updates.")

    @OptionGroup var connection: ConnectionArguments
    @Option(help: "MERGE, DISTINCT, COMMAND or RAW.") var mode = "MERGE"
    @OptionGroup var what: ItemArguments
    @Option(help: "yes, no or a length (DISTINCT).") var snapshot: String?
    @Option(name: .customLong("max-frequency"), help: "updates/s, unlimited or unfiltered.") var maxFrequency: String?
    @Option(name: .customLong("buffer-size"), help: "A size or unlimited.") var bufferSize: String?
    @Option var selector: String?
    @Option(name: .customLong("second-level-fields")) var secondLevelFields: String?
    @Option(name: .customLong("second-level-schema")) var secondLevelSchema: String?
    @Option(name: .customLong("second-level-adapter")) var secondLevelAdapter: String?
    @Option(help: "Exit after N updates.") var count: Int?
    @Option(help: "Give up after S seconds.") var timeout: Double?
    @Flag(help: "Print JSON events instead of a table.") var json = false
    @Flag(help: "One line per update even on a terminal (no live table).") var plain = false

    var request: SubscriptionRequest {
        SubscriptionRequest(
            mode: mode, items: what.itemList, group: what.group, fields: what.fieldList, schema: what.schema,
            dataAdapter: what.dataAdapter, snapshot: snapshot, maxFrequency: maxFrequency, bufferSize: bufferSize,
            selector: selector, secondLevelFields: secondLevelFields.map(ItemArguments.splitList),
            secondLevelSchema: secondLevelSchema, secondLevelAdapter: secondLevelAdapter)
    }

    func validate() throws {
        do { _ = try request.make() } catch { throw ValidationError(error.message) }
        if let count, count <= 0 { throw ValidationError("--count must be positive") }
    }

    func run() throws {
        let sub: Subscription
        do { sub = try request.make() } catch { throw ValidationError(error.message) }
        let client = connection.makeClient()
        let done = Completion()
        let clientEvents = ClientEventPrinter()
        clientEvents.printing = json
        clientEvents.onStatus = { done.statusChanged($0.rawValue) }
        clientEvents.onServerError = { code, message in
            Output.error("Refused by the server: \(code) \(message)")
            done.finish(ExitStatus.refused)
        }
        client.addDelegate(clientEvents)
        let printer = SubscriptionEventPrinter(name: "sub", names: sub.fields != nil)
        printer.printing = json
        let fields = sub.fields.map { $0 + (sub.commandSecondLevelFields ?? []) }
        // On a terminal: the live table; else (or with --plain) one line per update.
        let live = !json && !plain && LiveTableTerminal.stdoutIsTerminal ? LiveTableTerminal(fields: fields) : nil
        let table = json || live != nil ? nil : UpdateTable(fields: fields)
        if let live {
            done.beforeMessage = { live.stop() }
            clientEvents.onStatus = {
                done.statusChanged($0.rawValue)
                live.setStatus($0.rawValue)
            }
            clientEvents.onServerError = { code, message in
                live.stop()
                Output.error("Refused by the server: \(code) \(message)")
                done.finish(ExitStatus.refused)
            }
            printer.onClear = { item in live.clear(item: item) }
        }
        let keyField = fields?.firstIndex(of: "key").map { $0 + 1 }
        let commandField = fields?.firstIndex(of: "command").map { $0 + 1 }
        let isCommand = sub.mode == .COMMAND
        // Read once: the option's property wrapper costs hundreds of instructions per read.
        let count = self.count
        var received = 0
        printer.onUpdate = { u in
            if let live {
                let (values, changed, _) = u.fieldArrays
                var key: String?, command: String?
                if isCommand, let k = keyField ?? sub.keyPosition, let c = commandField ?? sub.commandPosition {
                    key = k >= 1 && k <= values.count ? values[k - 1] ?? "" : ""
                    command = c >= 1 && c <= values.count ? values[c - 1] : nil
                }
                live.apply(
                    LiveTable.Update(
                        item: u.itemName ?? String(u.itemPos), values: values, changed: changed,
                        key: key, command: command))
            }
            table?.print(u)
            received += 1
            if let count, received >= count { done.finish(ExitStatus.done) }
        }
        printer.onFailure = { code, message in
            live?.stop()
            Output.error("Subscription refused: \(code) \(message ?? "")")
            done.finish(ExitStatus.refused)
        }
        sub.addDelegate(printer)
        live?.start()
        client.subscribe(sub)
        client.connect()
        let code = done.wait(seconds: timeout)
        live?.stop()
        client.disconnect()
        Thread.sleep(forTimeInterval: 0.05)
        throw ExitCode(code)
    }
}

/// The human-readable output of `subscribe`: one aligned row per update (every column 14
/// characters wide, longer values cut with `…`, null shown as `∅`), after a header row.
/// `@unchecked Sendable`: used by one subscription's callbacks, which the client runs one at a time on its callback queue.
final class UpdateTable: @unchecked Sendable {
    static let width = 14
    let fields: [String]?
    private var headerPrinted = false

    init(fields: [String]?) { self.fields = fields }

    func print(_ u: ItemUpdate) {
        printRow(u, u.fieldBytes)
    }

    private func printRow(_ u: ItemUpdate, _ values: FieldBytes) {
        Output.write { w in
            if !headerPrinted {
                headerPrinted = true
                Self.pad(&w, "item")
                if let fields {
                    for f in fields { Self.pad(&w, f) }
                } else {
                    for p in 0..<values.count { Self.pad(&w, String(p + 1)) }
                }
                w.byte(0x0A)
            }
            if let name = u.itemName { Self.pad(&w, name) } else { Self.pad(&w, String(u.itemPos)) }
            for i in 0..<values.count {
                values.withValue(i) { bytes in
                    if let bytes { Self.pad(&w, utf8: bytes) } else { Self.pad(&w, "∅") }
                }
            }
            w.byte(0x0A)
        }
    }

    /// `s` in a column: cut to `width - 2` characters and `…` when longer than `width - 1`,
    /// then at least one space, up to `width` characters.
    static func pad(_ w: inout JSONWriter, _ s: String) {
        var s = s
        let done: Bool = s.withUTF8 { padASCII(&w, $0) }
        if done { return }
        padCharacters(&w, s)
    }

    /// `pad` for a value given as its UTF-8 bytes (valid UTF-8).
    static func pad(_ w: inout JSONWriter, utf8 p: UnsafeBufferPointer<UInt8>) {
        if padASCII(&w, p) { return }
        padCharacters(&w, String(decoding: p, as: UTF8.self))
    }

    /// `pad` when every character is one byte (ASCII without CR: CR LF is one character);
    /// false, with nothing written, otherwise.
    @inline(__always)
    private static func padASCII(_ w: inout JSONWriter, _ p: UnsafeBufferPointer<UInt8>) -> Bool {
        for b in p where b >= 0x80 || b == 0x0D { return false }
        if p.count > width - 1 {
            w.append(UnsafeBufferPointer(rebasing: p[0..<(width - 2)]))
            w.raw("… ")
        } else {
            w.append(p)
            for _ in 0..<(width - p.count) { w.byte(0x20) }
        }
        return true
    }

    private static func padCharacters(_ w: inout JSONWriter, _ s: String) {
        let t = s.count > width - 1 ? String(s.prefix(width - 2)) + "…" : s
        w.append(t)
        for _ in 0..<max(1, width - t.count) { w.byte(0x20) }
    }
}

struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "send", abstract: "Send a message and print its outcome.")

    @OptionGroup var connection: ConnectionArguments
    @Option(help: "The message text.") var message: String
    @Option(help: "Sequence name (letters, digits, _).") var sequence: String?
    @Option(name: .customLong("max-wait-ms"), help: "Server-side timeout for the sequence.") var maxWaitMs: Int = -1
    @Option(help: "Give up after S seconds.") var timeout: Double = 10
    @Flag(help: "Print the outcome as a JSON event.") var json = false

    func validate() throws {
        if let sequence,
            !sequence.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        {
            throw ValidationError("Invalid --sequence '\(sequence)'")
        }
    }

    func run() throws {
        let client = connection.makeClient()
        let done = Completion()
        let events = ClientEventPrinter()
        events.printing = false
        events.onStatus = { done.statusChanged($0.rawValue) }
        events.onServerError = { code, message in
            Output.error("Refused by the server: \(code) \(message)")
            done.finish(ExitStatus.refused)
        }
        client.addDelegate(events)
        let printer = MessageEventPrinter(name: "msg")
        printer.printing = json
        printer.onOutcome = { kind, code in
            if !json { Output.line(code.map { "\(kind) \($0)" } ?? kind) }
            switch kind {
            case "processed": done.finish(ExitStatus.done)
            case "denied": done.finish(ExitStatus.refused)
            default: done.finish(ExitStatus.refused)
            }
        }
        client.connect()
        client.sendMessage(message, withSequence: sequence, timeout: maxWaitMs, delegate: printer, enqueueWhileDisconnected: true)
        let code = done.wait(seconds: timeout)
        client.disconnect()
        Thread.sleep(forTimeInterval: 0.05)
        throw ExitCode(code)
    }
}

struct CapabilitiesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "capabilities", abstract: "Print the optional features of this build.")

    func run() throws {
        Output.json(["capabilities": ["mpn", "second-level", "json-patch", "tlcp-diff", "property-events"]])
    }
}
