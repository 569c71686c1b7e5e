import ArgumentParser
import Foundation

/// `lightstreamer`: a command-line Lightstreamer client.
/// Exit codes: 0 done, 1 timeout, 2 refused by the server, 3 no session, 4 bad arguments.
struct Lightstreamer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lightstreamer",
        abstract: "Lightstreamer client: subscribe, send messages, or script a whole session.",
        subcommands: [SubscribeCommand.self, SendCommand.self, SessionCommand.self, MPNCommand.self, CapabilitiesCommand.self])
}

/// Unknown options are ignored with a warning (scripts for later versions still run).
func dropUnknownOptions(_ args: [String]) -> [String] {
    guard args.first == "session" else { return args }
    let known: Set<String> = [
        "server", "adapter-set", "user", "password", "transport", "content-length", "keepalive-ms", "idle-timeout-ms",
        "polling-interval-ms", "retry-delay-ms", "first-retry-max-delay-ms", "reconnect-timeout-ms", "stalled-timeout-ms",
        "session-recovery-timeout-ms", "reverse-heartbeat-ms", "requested-max-bandwidth", "slowing",
        "server-instance-address-ignored", "log-level", "help",
    ]
    var out: [String] = []
    var i = 0
    while i < args.count {
        let a = args[i]
        if a.hasPrefix("--"), !known.contains(String(a.dropFirst(2).split(separator: "=").first ?? "")) {
            FileHandle.standardError.write(Data("warning: ignoring unknown option \(a)\n".utf8))
            if !a.contains("="), i + 1 < args.count, !args[i + 1].hasPrefix("--") { i += 1 }
        } else {
            out.append(a)
        }
        i += 1
    }
    return out
}

do {
    var command = try Lightstreamer.parseAsRoot(dropUnknownOptions(Array(CommandLine.arguments.dropFirst())))
    try command.run()
    Output.flush()
} catch let e as ExitCode {
    Output.flush()
    exit(e.rawValue)
} catch {
    Output.flush()
    let code = Lightstreamer.exitCode(for: error)
    if code == .success {
        Lightstreamer.exit(withError: error)
    }
    FileHandle.standardError.write(Data((Lightstreamer.fullMessage(for: error) + "\n").utf8))
    exit(ExitStatus.badArguments)
}
