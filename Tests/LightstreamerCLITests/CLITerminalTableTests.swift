import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `lightstreamer subscribe` on a real pseudo-terminal: the CLI runs inside a detached tmux
/// session (120 × 40) against a spawned `lightstreamer-server` (DEMO adapter set), and the
/// screen is read with `tmux capture-pane`.
@Suite(.serialized) struct CLITerminalTableTests {
    static var tmux: String? {
        ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs tmux on its own server socket; returns its standard output (waits at most 10 s).
    static func tmux(_ socket: String, _ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try #require(tmux))
        // A configuration of our own (not the user's): panes stay after their process exits, so
        // the screen after the exit can be read.
        let conf = FileManager.default.temporaryDirectory.appendingPathComponent("ls-cli-tmux.conf")
        if !FileManager.default.fileExists(atPath: conf.path) {
            try Data("set-option -g remain-on-exit on\n".utf8).write(to: conf)
        }
        p.arguments = ["-L", socket, "-f", conf.path] + args
        var env = ProcessInfo.processInfo.environment
        env["TERM"] = "xterm-256color"
        env.removeValue(forKey: "TMUX")
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        // Its output up to EOF (tmux closes it when the command is done; the server it may
        // start keeps no copy), read on a thread of its own so that the wait has a timeout.
        let box = OutputCollector()
        let done = DispatchSemaphore(value: 0)
        let reader = out.fileHandleForReading
        Thread {
            box.append(reader.readDataToEndOfFile())
            done.signal()
        }.start()
        if done.wait(timeout: .now() + 10) == .timedOut, p.isRunning { p.terminate() }
        return box.text
    }

    /// `tmux new-session -d …`, which also starts the tmux server of `socket`. On Linux it is
    /// spawned with no signal blocked and default handlers: a test process's threads block most
    /// signals and a child inherits that mask, so a tmux server started from here would never
    /// see SIGCHLD (its panes' processes never reaped), nor SIGTERM, and would not exit on
    /// `kill-server`. Waits at most 10 s for the tmux client to return.
    static func newSession(_ socket: String, _ args: [String]) throws {
        #if os(Linux)
        let path = try #require(tmux)
        let conf = FileManager.default.temporaryDirectory.appendingPathComponent("ls-cli-tmux.conf")
        if !FileManager.default.fileExists(atPath: conf.path) {
            try Data("set-option -g remain-on-exit on\n".utf8).write(to: conf)
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var files = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&files)
        defer { posix_spawn_file_actions_destroy(&files) }
        posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0)
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"
        environment.removeValue(forKey: "TMUX")
        let argv = ([path, "-L", socket, "-f", conf.path, "new-session"] + args).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid = pid_t()
        let rc = posix_spawn(&pid, path, &files, &attr, argv, envp)
        guard rc == 0 else { throw CLITestError("posix_spawn tmux: \(rc)") }
        var status: Int32 = 0
        for _ in 0..<1000 {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || r < 0 { break }
            usleep(10_000)
        }
        #else
        _ = try tmux(socket, ["new-session"] + args)
        #endif
    }

    static func rows(_ screen: String, _ items: [String]) -> [String: String] {
        var r: [String: String] = [:]
        for line in screen.split(separator: "\n") {
            let name = line.split(separator: " ").first.map(String.init) ?? ""
            if items.contains(name) { r[name] = String(line) }
        }
        return r
    }

    @Test(.enabled(if: tmux != nil, "tmux is installed"))
    func liveTableIsDrawnInPlaceAndTheTerminalIsRestored() async throws {
        let server = try await CLILiveServerTests.LiveServer.start()
        defer { Task { await server.stop() } }
        let cli = try #require(CLITests.binary)
        let socket = "ls-cli-\(UUID().uuidString.prefix(8))"
        let items = (1...6).map { "item\($0)" }
        // The shell ignores SIGINT (so Ctrl-C reaches only the CLI) and prints its exit status
        // on the main screen once the CLI has given the terminal back, then stays (a dead pane
        // is not drawn the same way); `kill-server` ends it.
        let command =
            "sh -c 'trap \"\" INT; \(cli.path) subscribe --server \(server.address) --items \(items.joined(separator: ",")) "
            + "--fields stock_name,last_price,time,pct_change --timeout 120; echo cli-exit=$?; sleep 30'"
        try Self.newSession(socket, ["-d", "-x", "120", "-y", "40", "-s", "t", command])
        defer { _ = try? Self.tmux(socket, ["kill-server"]) }

        // The table: a header, one row per item, CONNECTED in the status line.
        var first = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            first = try Self.tmux(socket, ["capture-pane", "-p", "-t", "t"])
            if Self.rows(first, items).count == items.count, first.contains("CONNECTED") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let lines = first.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.hasPrefix("item") == true, "\(first)")
        #expect(lines.first?.contains("last_price") == true, "\(first)")
        #expect(Self.rows(first, items).count == items.count, "\(first)")
        let status = try #require(lines.last { $0.contains("updates/s") }, "\(first)")
        #expect(status.contains("CONNECTED:"), "\(status)")
        // Each item once: updated in place, not one line per update.
        for item in items {
            #expect(lines.filter { $0.hasPrefix(item + " ") }.count == 1, "\(first)")
        }
        // Within 40 columns × 120 characters.
        #expect(lines.count <= 41)
        #expect(lines.allSatisfy { $0.count <= 120 })

        // Values change between two captures.
        var changed = false
        let changeDeadline = Date().addingTimeInterval(20)
        var second = ""
        while !changed, Date() < changeDeadline {
            try await Task.sleep(for: .milliseconds(1000))
            second = try Self.tmux(socket, ["capture-pane", "-p", "-t", "t"])
            changed = Self.rows(second, items) != Self.rows(first, items) && Self.rows(second, items).count == items.count
        }
        #expect(changed, "\(first)\n----\n\(second)")

        // Ctrl-C: the CLI exits and gives the terminal back (the table is gone).
        _ = try Self.tmux(socket, ["send-keys", "-t", "t", "C-c"])
        var after = ""
        let exitDeadline = Date().addingTimeInterval(10)
        while Date() < exitDeadline {
            after = try Self.tmux(socket, ["capture-pane", "-p", "-t", "t"])
            if !after.contains("updates/s") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(!after.contains("updates/s"), "\(after)")
        // Exit status 130, written by the shell on the main screen.
        var exited = ""
        for _ in 0..<50 {
            exited = try Self.tmux(socket, ["capture-pane", "-p", "-t", "t"])
            if exited.contains("cli-exit=") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(exited.contains("cli-exit=130"), "\(exited)")
        #expect(!exited.contains("updates/s"))
    }

    /// COMMAND mode: one row per key of the demo portfolio.
    @Test(.enabled(if: tmux != nil, "tmux is installed"))
    func commandModeHasOneRowPerKey() async throws {
        let server = try await CLILiveServerTests.LiveServer.start()
        defer { Task { await server.stop() } }
        let cli = try #require(CLITests.binary)
        let socket = "ls-cli-\(UUID().uuidString.prefix(8))"
        let command =
            "\(cli.path) subscribe --server \(server.address) --mode COMMAND --items portfolio1 "
            + "--fields key,command,qty,price --timeout 60"
        try Self.newSession(socket, ["-d", "-x", "100", "-y", "30", "-s", "t", command])
        defer { _ = try? Self.tmux(socket, ["kill-server"]) }
        var screen = ""
        var keys: [String] = []
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            screen = try Self.tmux(socket, ["capture-pane", "-p", "-t", "t"])
            // "portfolio1 <key> <command> <qty> <price>"
            keys = screen.split(separator: "\n").filter { $0.hasPrefix("portfolio1 ") }
                .compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
            if keys.count >= 3, screen.contains("CONNECTED") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        // The demo portfolio starts with item1, item7 and item12; each key once.
        #expect(Set(keys).isSuperset(of: ["item1", "item7", "item12"]), "\(screen)")
        #expect(keys.count == Set(keys).count, "\(screen)")
        #expect(screen.split(separator: "\n").first?.hasPrefix("item") == true)
        #expect(screen.contains("key") && screen.contains("qty"))
        _ = try Self.tmux(socket, ["send-keys", "-t", "t", "C-c"])
    }

    /// `--plain` on a terminal: today's line output.
    @Test(.enabled(if: tmux != nil, "tmux is installed"))
    func plainKeepsLineOutputOnATerminal() async throws {
        let server = try await CLILiveServerTests.LiveServer.start()
        defer { Task { await server.stop() } }
        let cli = try #require(CLITests.binary)
        let socket = "ls-cli-\(UUID().uuidString.prefix(8))"
        let command =
            "\(cli.path) subscribe --server \(server.address) --items item1 --fields stock_name,last_price "
            + "--count 3 --plain --timeout 30"
        try Self.newSession(socket, ["-d", "-x", "120", "-y", "40", "-s", "t", command])
        defer { _ = try? Self.tmux(socket, ["kill-server"]) }
        var screen = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            screen = try Self.tmux(socket, ["capture-pane", "-p", "-t", "t"])
            if screen.split(separator: "\n").filter({ $0.hasPrefix("item1 ") }).count >= 3 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(screen.split(separator: "\n").filter { $0.hasPrefix("item1 ") }.count == 3, "\(screen)")
        #expect(!screen.contains("updates/s"))
    }
}
