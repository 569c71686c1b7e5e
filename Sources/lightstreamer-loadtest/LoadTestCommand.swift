import ArgumentParser
import Foundation
import LightstreamerServer
import Logging
import NIOCore
import NIOPosix

/// `lightstreamer-loadtest`: starts the server in this process with a synthetic adapter set
/// and drives it over loopback WebSockets. Reports delivered updates/s, p50/p99 latency, and
/// memory per idle session.
@main
struct LoadTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lightstreamer-loadtest",
        abstract: "Loopback load test of the Lightstreamer Swift server (WS sessions, MERGE updates).")

    func validate() throws {
        guard items >= 1, items <= 1_000_000 else { throw ValidationError("--items must be from 1 to 1,000,000") }
        guard rate.isFinite, rate > 0, rate <= 10_000 else { throw ValidationError("--rate must be above 0 and at most 10,000") }
        guard phases >= 1, phases <= items else { throw ValidationError("--phases must be from 1 to --items (\(items))") }
    }

    @Option(help: "WS sessions to open.") var sessions = 1_000
    @Option(help: "Items each session subscribes to.") var itemsPerSession = 10
    @Option(help: "Distinct items in the adapter (sessions share them).") var items = 100
    @Option(help: "Updates per second of each item.") var rate = 10.0
    @Option(help: "Seconds to measure, after the warm-up.") var seconds = 10.0
    @Option(help: "Warm-up seconds once every session is subscribed.") var warmup = 3.0
    @Option(help: "Server event-loop threads.") var serverThreads = 1
    @Option(help: "Client event-loop threads.") var clientThreads = 1
    @Option(help: "Client: connections opened at a time (each batch settles before the next).") var connectBatch = 200
    @Option(help: "Also measure memory per idle session with this many sessions (0: skip).") var idleSessions = 0
    @Option(help: "Seconds the idle sessions of --connect-port are held open.") var idleHoldSeconds = 8.0
    @Flag(help: "Only run the server (LOAD adapter set) and print its port; drive it with --connect-port from another process.")
    var serve = false
    @Option(help: "Port of a server started with --serve (default: start one in this process).") var connectPort: Int?
    @Option(help: "Port for --serve (0: any).") var port = 0
    @Option(help: "Server: longest delay added to updates to batch them per write (ms).") var maxUpdateDelayMillis = 0
    @Option(help: "Server: bytes of a connection's output the kernel may keep unsent (0: its own limit).")
    var maxSocketUnsentBytes = FrontOptions().maxSocketUnsentBytes
    @Flag(help: "Server: the LOAD adapter hands its updates over one by one, not each tick as one batch.")
    var perItemUpdates = false
    @Option(
        help:
            "Server: the LOAD adapter updates its items in this many groups of consecutive items, spread evenly over each period (1: all at the same moment; at most --items)."
    )
    var phases = 1
    @Option(
        help:
            "Server: seconds a session without a stream waits for a bind or recovery before it ends (0.1 to 86,400; Benchmarks/closed-heap.sh uses a short one)."
    )
    var sessionTimeoutSeconds = 600.0

    @Option(
        help:
            "Remote adapters benchmark: a python with lightstreamer-adapter; runs --remote-script as the remote adapters and counts the updates its Data Adapter pushes into the item engine (BENCHMARKS.md, \"Remote adapters\")."
    )
    var remotePython: String?
    @Option(help: "The remote adapters script of --remote-python.") var remoteScript = "Tests/Interop/remote_adapters.py"
    @Option(help: "Items the remote Data Adapter floods (--remote-python).") var remoteItems = 1
    @Flag(
        help:
            "Remote adapters benchmark without an SDK: a Swift remote Data Adapter (this executable, a child process) feeds --items items over ARI; counts the updates into the item engine and, with --sessions, serves that many WS sessions from a second child process (BENCHMARKS.md, \"Remote adapters\")."
    )
    var remoteSwift = false
    @Option(help: "Updates/s in total the Swift remote sends (--remote-swift); 0: as fast as it can.") var remoteRate = 0.0
    @Option(help: "Internal (--remote-swift): run as the Swift remote Data Adapter connecting to this port.") var remoteFeedPort: Int?
    @Option(help: "Adapter set the WS sessions of --connect-port use.") var adapterSet = "LOAD"

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = .warning
            return h
        }
        if let remoteFeedPort {
            let generator = try RemoteFeedGenerator(port: remoteFeedPort, rate: remoteRate)
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                Thread {
                    generator.run()
                    c.resume()
                }.start()
            }
            return
        }
        if remoteSwift {
            try await RemoteSwiftBench(
                items: items, rate: remoteRate, sessions: sessions, itemsPerSession: itemsPerSession,
                warmup: warmup, seconds: seconds, serverThreads: serverThreads
            ).run()
            return
        }
        if let remotePython {
            try await RemoteBench(
                python: remotePython, script: remoteScript, items: remoteItems, warmup: warmup,
                seconds: seconds
            ).run()
            return
        }
        if let connectPort {
            let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: clientThreads)
            if idleSessions > 0 {
                // Idle sessions held open (8 s by default): read the server's RSS and CPU meanwhile.
                let stats = LoadStats()
                let channels = try await open(idleSessions, port: connectPort, group: clientGroup, stats: stats, subscribe: false)
                print("idle: \(stats.state.withLockedValue { $0.subscribed }) idle WS sessions open; holding \(idleHoldSeconds) s")
                try await Task.sleep(for: .milliseconds(Int(min(idleHoldSeconds, 3_600) * 1000)))
                for c in channels { try? await c.close() }
            }
            if sessions > 0 { try await measureLoad(port: connectPort, group: clientGroup) }
            try await clientGroup.shutdownGracefully()
            return
        }
        // The benchmark's server runs on the allocator lightstreamer-server runs on (this may
        // execute the program again; LIGHTSTREAMER_MALLOC=system keeps the C library's).
        let allocator = serve ? ProcessAllocator.adopt() : nil
        let adapter = LoadDataAdapter(itemCount: items, rate: rate, batched: !perItemUpdates, phases: phases)
        let set = AdapterSet(name: "LOAD", dataAdapters: ["DEFAULT": adapter])
        var options = ServerOptions(host: "127.0.0.1", port: serve ? port : 0)
        options.threads = serverThreads
        let timeoutMillis = Int(min(max(sessionTimeoutSeconds.isFinite ? sessionTimeoutSeconds : 600, 0.1), 86_400) * 1000)
        options.sessions.sessionTimeoutMillis = timeoutMillis
        options.sessions.sessionRecoveryMillis = timeoutMillis
        options.sessions.recoveryWindowMillis = 2_000
        options.sessions.maxUpdateDelayMillis = maxUpdateDelayMillis
        // 0 or less: off; past 64 MiB: 64 MiB (as the server reads it).
        options.front.maxSocketUnsentBytes = maxSocketUnsentBytes
        // Every client comes from 127.0.0.1: no per-address session limit here.
        options.sessions.maxSessionsPerAddress = nil
        options.front.maxConnectionsPerAddress = .max
        let server = LightstreamerServer(options: options, adapterSets: [set])
        try await server.start()
        let port = server.port ?? 0
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: clientThreads)
        let timerGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        adapter.start(on: timerGroup.next())
        if serve {
            print("serving on port \(server.port ?? 0)")
            if let allocator { print("server malloc: \(allocator)") }
            let before = residentBytes()
            let first = server.metrics.snapshot
            var last = (cpu: processCPUSeconds(), updates: first.updatesSent, conflated: first.updatesConflated)
            while true {
                try await Task.sleep(for: .seconds(5))
                // CPU of this whole process (server and producer) per U line it wrote, over the last 5 s.
                let snapshot = server.metrics.snapshot
                let now = (cpu: processCPUSeconds(), updates: snapshot.updatesSent, conflated: snapshot.updatesConflated)
                let updates = now.updates - last.updates
                let perUpdate = updates > 0 ? (now.cpu - last.cpu) / Double(updates) * 1e6 : 0
                let line = String(
                    format:
                        "sessions %d, RSS %.1f MiB (%.1f at start); last 5 s: %d updates/s, CPU %.2f s, %.2f µs per update, %d conflated/s\n",
                    server.sessionCount, Double(residentBytes()) / 1_048_576, Double(before) / 1_048_576,
                    updates / 5, now.cpu - last.cpu, perUpdate, (now.conflated - last.conflated) / 5)
                // Unbuffered, so that a script reading a pipe or file sees each line at once.
                FileHandle.standardError.write(Data(line.utf8))
                last = now
            }
        }

        if idleSessions > 0 {
            try await measureIdle(port: port, group: clientGroup, server: server)
        }
        if sessions > 0 {
            try await measureLoad(port: port, group: clientGroup)
        }
        adapter.stop()
        await server.shutdown()
        try await clientGroup.shutdownGracefully()
        try await timerGroup.shutdownGracefully()
    }

    func open(
        _ count: Int, port: Int, group: any EventLoopGroup, stats: LoadStats, subscribe: Bool,
        offset: Int = 0
    ) async throws -> [any Channel] {
        var channels: [any Channel] = []
        var batch: [(EventLoopFuture<any Channel>, names: [String])] = []
        var retried = 0
        func connect(_ names: [String]) -> EventLoopFuture<any Channel> {
            ClientBootstrap(group: group)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { ch in
                    ch.eventLoop.makeCompletedFuture {
                        try ch.pipeline.syncOperations.addHandler(
                            LoadClientHandler(
                                items: names, stats: stats, subscribe: subscribe,
                                adapterSet: adapterSet))
                    }
                }
                .connect(host: "127.0.0.1", port: port)
        }
        // A server past its capacity accepts slowly (its accept queue fills, and the kernel
        // drops connection attempts until it has room): a connect that fails is tried again,
        // up to five times, as a client would, rather than ending the run.
        func settle() async throws {
            for (f, names) in batch {
                var attempt = 1
                var future = f
                while true {
                    do {
                        channels.append(try await future.get())
                        break
                    } catch  where attempt < 5 {
                        attempt += 1
                        retried += 1
                        future = connect(names)
                    }
                }
            }
            batch = []
        }
        for i in 0..<count {
            let first = ((i + offset) * itemsPerSession) % max(items, 1)
            let names = (0..<itemsPerSession).map { "load\((first + $0) % items)" }
            batch.append((connect(names), names))
            if batch.count >= max(1, connectBatch) { try await settle() }
        }
        try await settle()
        if retried > 0 { print("load: \(retried) connects tried again after a failure") }
        // Wait until every session answered (SUBOK, or CONOK without subscription).
        let deadline = ContinuousClock.now + .seconds(120)
        while stats.state.withLockedValue({ $0.subscribed + $0.errors }) < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        return channels
    }

    func measureIdle(port: Int, group: any EventLoopGroup, server: LightstreamerServer) async throws {
        let stats = LoadStats()
        try await Task.sleep(for: .milliseconds(500))
        let before = residentBytes()
        let channels = try await open(idleSessions, port: port, group: group, stats: stats, subscribe: false)
        try await Task.sleep(for: .seconds(1))
        let after = residentBytes()
        let per = Double(after - before) / Double(max(idleSessions, 1))
        print(
            String(
                format:
                    "idle: %d WS sessions (server and client in one process): %.1f KiB per session (RSS %.1f -> %.1f MiB), %d sessions live",
                idleSessions, per / 1024, Double(before) / 1_048_576, Double(after) / 1_048_576, server.sessionCount))
        for c in channels { try? await c.close() }
        try await Task.sleep(for: .seconds(1))
    }

    func measureLoad(port: Int, group: any EventLoopGroup) async throws {
        let stats = LoadStats()
        let expected = Double(sessions * itemsPerSession) * rate
        stats.state.withLockedValue { $0.sampleEvery = max(1, Int(expected * seconds / 2_000_000)) }
        let start = ContinuousClock.now
        let channels = try await open(sessions, port: port, group: group, stats: stats, subscribe: true, offset: 0)
        let ready = stats.state.withLockedValue { ($0.subscribed, $0.errors) }
        print("load: \(ready.0) of \(sessions) sessions subscribed (\(ready.1) errors) in \(ContinuousClock.now - start)")
        try await Task.sleep(for: .milliseconds(Int(warmup * 1000)))
        stats.state.withLockedValue { $0.recording = true }
        let measureStart = ContinuousClock.now
        let cpuAtStart = processCPUSeconds()
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let (updates, latencies) = stats.state.withLockedValue { s -> (Int, [Int]) in
            s.recording = false
            return (s.updates, s.latenciesMicros)
        }
        let elapsed =
            Double((ContinuousClock.now - measureStart).components.attoseconds) / 1e18
            + Double((ContinuousClock.now - measureStart).components.seconds)
        let sorted = latencies.sorted()
        func pct(_ p: Double) -> Double {
            sorted.isEmpty ? .nan : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
        }
        let driverCPU = processCPUSeconds() - cpuAtStart
        print(
            String(
                format:
                    "load: %d sessions x %d items x %.0f/s: expected %.0f updates/s, delivered %.0f updates/s (%.1f%%); latency p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms (%d samples); load tool CPU %.0f %% of a core",
                sessions, itemsPerSession, rate, expected, Double(updates) / elapsed, 100 * Double(updates) / elapsed / expected,
                pct(0.5), pct(0.99), pct(0.999), sorted.count, 100 * driverCPU / max(elapsed, 0.001)))
        for c in channels { try? await c.close() }
    }
}
