import ArgumentParser
import Foundation
import LightstreamerClient
import NIOPosix

/// `lightstreamer-soak`: holds many client sessions on a running server for a long time, through
/// a proxy that keeps cutting connections, and checks that no update is lost or duplicated.
/// Driven by `scripts/soak.sh`; see docs/RELIABILITY.md ("Soak").
@main
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lightstreamer-soak",
        abstract: "Soak driver: N sessions through a connection-cutting proxy, checking the counter item for loss and duplicates.")

    @Option(help: "Port of the server (on 127.0.0.1).")
    var serverPort: Int

    @Option(help: "Adapter set with the items counter (field count), quote1… (last, volume) and mpntick (tick).")
    var adapterSet = "SOAK"

    @Option(help: "Sessions to hold.")
    var sessions = 2000

    @Option(help: "Seconds to hold them (after all are up).")
    var seconds = 1800

    @Option(help: "Sessions opened per second while ramping up.")
    var rampPerSecond = 200

    @Option(help: "Number of quote items to spread the sessions over (0: none).")
    var stockItems = 20

    @Option(help: "Seconds between two rounds of socket cuts (0: no cuts).")
    var cutEvery = 20

    @Option(help: "Share of the live proxied connections reset at each round.")
    var cutFraction = 0.1

    @Option(help: "Sessions that also register an MPN device.")
    var mpnClients = 40

    @Option(help: "Seconds between two trigger subscriptions of each MPN client.")
    var triggerEvery = 60

    @Option(help: "Counter updates per second on the server (to aim the triggers a few seconds ahead).")
    var counterRate = 20

    @Option(help: "File created once every session is up (the sampler's steady-state mark).")
    var readyFile: String?

    @Option(help: "File to write the acknowledged MPN device and subscription ids to (one per line, 'device ID' / 'subscription ID').")
    var idsFile: String?

    @Flag(help: "Connect the clients straight to the server (no proxy, no cuts): to tell the proxy's effects apart.")
    var direct = false

    @Option(help: "Client library log level on standard error (trace, debug, info, warn, error); none by default.")
    var clientLog: String?

    @Option(help: "Seconds between two progress lines.")
    var progressEvery = 60

    func run() async throws {
        let started = ContinuousClock.now
        if let clientLog {
            let level: ConsoleLogLevel =
                switch clientLog {
                case "trace": .trace
                case "debug": .debug
                case "info": .info
                case "warn": .warn
                default: .error
                }
            LightstreamerClient.setLoggerProvider(ConsoleLoggerProvider(level: level))
        }
        let proxy = CutProxy(group: MultiThreadedEventLoopGroup.singleton, upstreamPort: serverPort)
        let proxyPort = try await proxy.start()
        log("proxy 127.0.0.1:\(proxyPort) → 127.0.0.1:\(serverPort)")

        // Ramp up.
        let address = "http://127.0.0.1:\(direct ? serverPort : proxyPort)"
        var clients: [SoakClient] = []
        clients.reserveCapacity(sessions)
        let batch = max(1, rampPerSecond / 10)
        for i in 0..<sessions {
            let c = SoakClient(
                index: i, serverAddress: address, adapterSet: adapterSet, stockItems: stockItems,
                withMPN: i < mpnClients)
            clients.append(c)
            c.connect()
            if (i + 1) % batch == 0 { try await Task.sleep(for: .milliseconds(100)) }
        }
        let all = clients
        let upDeadline = ContinuousClock.now + .seconds(max(120, sessions / 10))
        while ContinuousClock.now < upDeadline {
            let up = all.filter { $0.probe.snapshot.lastCount != nil }.count
            let mpnUp = all.filter { $0.mpn.map(\.isRegistered) ?? true }.count
            if up == all.count && mpnUp == all.count { break }
            try await Task.sleep(for: .seconds(1))
        }
        let rampSeconds = (ContinuousClock.now - started).seconds
        let up = all.filter { $0.probe.snapshot.lastCount != nil }.count
        log("ramp-up: \(up)/\(sessions) sessions receiving the counter after \(String(format: "%.1f", rampSeconds)) s")
        if let readyFile { _ = FileManager.default.createFile(atPath: readyFile, contents: Data()) }

        // MPN: each device gets its ticker subscription now, and a trigger every `triggerEvery` s.
        let mpnClientsList = all.filter { $0.mpn != nil }
        for c in mpnClientsList { c.subscribeTicker(item: "mpntick", field: "tick") }

        // Steady state: cuts, triggers, progress.
        let steadyStart = ContinuousClock.now
        let end = steadyStart + .seconds(seconds)
        var cuts = 0
        var cutRounds = 0
        var nextCut = steadyStart + .seconds(max(cutEvery, 1))
        var nextTrigger = steadyStart + .seconds(5)
        var nextProgress = steadyStart + .seconds(progressEvery)
        while ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(250))
            let now = ContinuousClock.now
            if cutEvery > 0, !direct, now >= nextCut {
                cuts += proxy.cut(fraction: cutFraction)
                cutRounds += 1
                nextCut = now + .seconds(cutEvery)
            }
            if triggerEvery > 0, now >= nextTrigger {
                for c in mpnClientsList { c.subscribeTrigger(ahead: counterRate * 5) }
                nextTrigger = now + .seconds(triggerEvery)
            }
            if now >= nextProgress {
                let t = SoakTotals(all)
                log(
                    "t=\(Int((now - steadyStart).seconds))s connected=\(t.connected) updates=\(t.updates) lost=\(t.lost) dup=\(t.duplicated) "
                        + "recovered=\(t.recovered)/\(t.recoveryAttempts) sessions=\(t.sessions) cuts=\(cuts) proxied=\(proxy.liveConnections)"
                )
                nextProgress = now + .seconds(progressEvery)
            }
        }

        // Settle: no more cuts; give recoveries and the last triggers time to complete.
        log("steady state over; settling 20 s without cuts")
        try await Task.sleep(for: .seconds(20))
        let totals = SoakTotals(all)
        let staleAfter = ContinuousClock.now - .seconds(10)
        let stale = all.filter { c in
            let f = c.probe.snapshot
            return !f.connected || (f.lastUpdate.map { $0 < staleAfter } ?? true)
        }
        let maxCount = all.compactMap { $0.probe.snapshot.lastCount }.max() ?? 0
        let minCount = all.filter { $0.probe.snapshot.connected }.compactMap { $0.probe.snapshot.lastCount }.min() ?? 0

        var report = SoakReport()
        report.add("sessions", sessions)
        report.add("sessions_up_after_rampup", up)
        report.add("rampup_seconds", Int(rampSeconds.rounded()))
        report.add("steady_seconds", seconds)
        report.add("counter_updates", totals.updates)
        report.add("stock_updates", totals.stockUpdates)
        report.add("lost", totals.lost)
        report.add("duplicated", totals.duplicated)
        report.add("lost_reported_by_server", totals.lostReportedByServer)
        report.add("snapshots", totals.snapshots)
        report.add("new_sessions", totals.sessions - sessions)
        report.add("recovery_attempts", totals.recoveryAttempts)
        report.add("recoveries", totals.recovered)
        report.add("will_retry", totals.willRetry)
        report.add("server_errors", totals.serverErrors)
        report.add("subscription_errors", totals.subscriptionErrors)
        report.add("stale_clients", stale.count)
        report.add("counter_spread_at_end", maxCount - minCount)
        report.add("cut_rounds", cutRounds)
        report.add("socket_cuts", cuts)
        report.add("proxy_connections_accepted", proxy.acceptedConnections)
        report.add("proxy_upstream_connect_failures", proxy.failedUpstreamConnects)
        let mpn = mpnClientsList.compactMap { $0.mpn?.snapshot }
        report.add("mpn_devices", mpnClientsList.count)
        report.add("mpn_devices_registered", mpn.filter { $0.deviceId != nil }.count)
        report.add("mpn_registrations", mpn.reduce(0) { $0 + $1.registrations })
        report.add("mpn_subscriptions_requested", mpn.reduce(0) { $0 + $1.requested })
        report.add("mpn_subscriptions_activated", mpn.reduce(0) { $0 + $1.subscribed.count })
        report.add("mpn_subscriptions_triggered", mpn.reduce(0) { $0 + $1.triggered.count })
        report.add("mpn_failures", mpn.reduce(0) { $0 + $1.failures.count })
        report.print()

        let anomalous = all.filter { !$0.probe.snapshot.anomalies.isEmpty }
        for c in anomalous.prefix(20) {
            log("client \(c.probe.index) (\(c.transport)) anomalies: \(c.probe.snapshot.anomalies.joined(separator: "; "))")
        }
        for c in stale.prefix(20) {
            let f = c.probe.snapshot
            log(
                "stale client \(c.probe.index) (\(c.transport)) status=\(c.client.status) lastCount=\(f.lastCount.map(String.init) ?? "none")"
            )
        }
        if clientLog != nil {
            for line in proxy.describeLive(limit: 20) { log("proxy pair: \(line)") }
        }
        for m in mpn where !m.failures.isEmpty { log("mpn failures: \(m.failures.prefix(5))") }

        if let idsFile {
            var lines: [String] = []
            for m in mpn {
                if let d = m.deviceId { lines.append("device \(d)") }
                for s in m.subscribed.sorted() { lines.append("subscription \(s)") }
            }
            try (lines.joined(separator: "\n") + "\n").write(toFile: idsFile, atomically: true, encoding: .utf8)
        }

        // Disconnect everybody, so the sampler can see the server go back to idle.
        for c in all { c.disconnect() }
        try await Task.sleep(for: .seconds(3))
        await proxy.stop()
        log("all sessions disconnected")
        if totals.lost > 0 || totals.duplicated > 0 || !stale.isEmpty { throw ExitCode(1) }
    }
}

func log(_ s: String) {
    let stamp = ISO8601DateFormatter().string(from: Date())
    FileHandle.standardError.write(Data("[\(stamp)] \(s)\n".utf8))
}

struct SoakError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

extension Duration {
    var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
