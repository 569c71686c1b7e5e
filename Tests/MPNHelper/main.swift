// MPN test and benchmark helper.
//   mpn-helper crash <sqlite path>            registers devices and subscriptions forever, printing
//                                             "ACK <deviceId> <subscriptionId>" after each committed
//                                             write (the kill -9 test of MPNModuleTests kills it)
//   mpn-helper crash-trigger <sqlite path>    registers a device and a subscription with a trigger,
//                                             prints "ACK <deviceId> <subscriptionId>", fires the
//                                             trigger, and stops inside the provider's send (after the
//                                             outbox commit, before anything is sent), printing
//                                             "SENDING <subscriptionId> <idempotency key>" (the kill -9
//                                             test of the outbox kills it there)
//   mpn-helper bench-trigger [iterations]     trigger evaluations per second
//   mpn-helper bench-register sqlite <path> [n] | postgres <url> [n]
//                                             durable device registrations per second
//   mpn-helper bench-pipeline [devices]       triggered notifications per second through the whole
//                                             pipeline (item engine → trigger → TRIGGERED committed to
//                                             SQLite → APNs provider → local HTTP/2 TLS server)
import Crypto
import Foundation
import LightstreamerServer
import MPNModule
import MPNTestSupport

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

let args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first else { fail("usage: mpn-helper crash|bench-trigger|bench-register ...") }

func crash(path: String) async throws {
    let store = try SQLiteMPNStore(path: path)
    var i = 0
    while true {
        i += 1
        let now = Int64(i)
        let device = try await store.registerDevice(platform: .apple, applicationId: "crash.test", token: "tok\(i)", now: now).device
        let sub = MPNSubscriptionRecord(
            id: UUID().uuidString.lowercased(), deviceId: device.id, adapterSet: "DEMO",
            dataAdapter: "DEFAULT", group: "item\(i)", items: ["item\(i)"], schema: "f", fields: ["f"],
            mode: .merge, notificationFormat: #"{"aps":{"alert":"x"}}"#, trigger: nil,
            statusTimestamp: now, createdAt: now)
        try await store.insertSubscription(sub)
        // Unbuffered write so that an acknowledgement printed is an acknowledgement seen.
        FileHandle.standardOutput.write(Data("ACK \(device.id) \(sub.id)\n".utf8))
    }
}

/// A provider that announces the send and never finishes it: the process is killed here.
final class StallingProvider: MPNProvider {
    func send(_ n: MPNNotification) async -> MPNDeliveryResult {
        FileHandle.standardOutput.write(Data("SENDING \(n.subscriptionId) \(n.idempotencyKey ?? "-")\n".utf8))
        while true { try? await Task.sleep(for: .seconds(3600)) }
    }
}

func crashTrigger(path: String) async throws {
    var configuration = MPNConfiguration()
    configuration.enabled = true
    let registry = MPNProviderRegistry(configuration: configuration, providers: ["Apple/*": StallingProvider()])
    let quotes = ManualDataAdapter()
    let internalAdapter = MPNInternalDataAdapter()
    let engine = ItemEngine(adapterSets: [
        AdapterSet(
            name: "DEMO",
            dataAdapters: [
                "DEFAULT": quotes, MPNInternalDataAdapter.defaultName: internalAdapter,
            ])
    ])
    let store = try SQLiteMPNStore(path: path)
    let module = MPNModule(
        configuration: configuration, store: store, providers: registry, itemEngine: engine,
        internalAdapter: internalAdapter)
    try await module.start()
    let context = MPNRequestContext(adapterSet: "DEMO", sessionId: "crash")
    let device = try await module.register(
        MPNRegisterParameters(
            platform: .apple, applicationId: "com.example.app",
            deviceToken: "0a01"), context: context
    ).deviceId
    let id = try await module.activate(
        MPNActivateParameters(
            subscriptionId: 1, mode: .merge, group: "item1",
            schema: "stock_name last_price", deviceId: device,
            notificationFormat: #"{"aps":{"alert":"${stock_name} at $[2]","badge":"AUTO"}}"#,
            trigger: "Double.parseDouble(${last_price}) > 100"), context: context)
    FileHandle.standardOutput.write(Data("ACK \(device) \(id)\n".utf8))
    quotes.push("item1", ["stock_name": "ACME", "last_price": "150"])
    while true { try await Task.sleep(for: .seconds(3600)) }
}

func benchTrigger(iterations: Int) throws {
    let fields = ["stock_name", "last_price", "time", "pct_change"]
    let cases = [
        "Double.parseDouble(${last_price}) > 500.0",
        "Double.parseDouble($[2]) > 500.0 && $[1].startsWith(\"AN\") || Math.abs(Double.parseDouble($[4])) >= 2.5",
    ]
    var rows: [[String?]] = []
    for i in 0..<64 {
        let price: Double = 400 + Double(i) * 3.25
        let change: Double = Double(i % 7) - 3.1
        rows.append(["ANTIC", String(price), "12:00:\(i)", String(change)])
    }
    for text in cases {
        let trigger = try CompiledTrigger(text, fields: fields)
        var hits = 0
        let start = ContinuousClock.now
        for i in 0..<iterations where trigger.evaluate(rows[i & 63]) { hits += 1 }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            String(
                format: "%.0f evaluations/s  (%d in %.3f s, %d true)  %@", Double(iterations) / seconds, iterations, seconds,
                hits, text))
    }
}

func benchRegister(store: any MPNStore, count: Int, label: String) async throws {
    let run = UUID().uuidString.prefix(8)
    var start = ContinuousClock.now
    for i in 0..<count {
        _ = try await store.registerDevice(platform: .apple, applicationId: "bench.app", token: "\(run)-s\(i)", now: Int64(i))
    }
    var elapsed = ContinuousClock.now - start
    var seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(String(format: "%@: %.0f registrations/s sequential (%d in %.2f s)", label, Double(count) / seconds, count, seconds))
    start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for t in 0..<8 {
            group.addTask {
                for i in 0..<(count / 8) {
                    _ = try await store.registerDevice(
                        platform: .google, applicationId: "bench.app", token: "\(run)-c\(t)-\(i)",
                        now: Int64(i))
                }
            }
        }
        try await group.waitForAll()
    }
    elapsed = ContinuousClock.now - start
    seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(
        String(
            format: "%@: %.0f registrations/s with 8 concurrent clients (%d in %.2f s)", label,
            Double(count / 8 * 8) / seconds, count / 8 * 8, seconds))
}

func seconds(since start: ContinuousClock.Instant) -> Double {
    let e = ContinuousClock.now - start
    return Double(e.components.seconds) + Double(e.components.attoseconds) / 1e18
}

func benchPipeline(devices: Int) async throws {
    let apns = try await H2TestServer.start { r in .init(status: 200, headers: [("apns-id", r.header("apns-id") ?? "")]) }
    let client = testHTTPClient(trusting: apns.certificate)
    let provider = try APNsProvider(
        applicationId: "bench.app",
        configuration: APNsConfiguration(
            baseURL: apns.baseURL, teamId: "TEAM123456", keyId: "KEY1234567",
            privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation),
        httpClient: client)
    var configuration = MPNConfiguration()
    configuration.enabled = true
    let registry = MPNProviderRegistry(configuration: configuration, providers: ["Apple/*": provider])
    let quotes = ManualDataAdapter()
    let internalAdapter = MPNInternalDataAdapter()
    let engine = ItemEngine(adapterSets: [
        AdapterSet(
            name: "BENCH",
            dataAdapters: [
                "DEFAULT": quotes, MPNInternalDataAdapter.defaultName: internalAdapter,
            ])
    ])
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("mpn-pipeline-\(UUID().uuidString).sqlite").path
    defer { for x in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + x) } }
    let store = try SQLiteMPNStore(path: path)
    let module = MPNModule(
        configuration: configuration, store: store, providers: registry, itemEngine: engine,
        internalAdapter: internalAdapter)
    try await module.start()
    let context = MPNRequestContext(adapterSet: "BENCH", sessionId: "bench")
    var setup = ContinuousClock.now
    for i in 0..<devices {
        let device = try await module.register(
            MPNRegisterParameters(
                platform: .apple, applicationId: "bench.app",
                deviceToken: String(format: "%064x", i)), context: context)
        _ = try await module.activate(
            MPNActivateParameters(
                subscriptionId: i, mode: .merge, group: "item\(i % 100)",
                schema: "last_price", deviceId: device.deviceId,
                notificationFormat: #"{"aps":{"alert":"at ${last_price}","badge":"AUTO"}}"#,
                trigger: "Double.parseDouble(${last_price}) > 100.0"), context: context)
    }
    print(
        String(
            format: "set-up: %d devices registered and activated in %.2f s (%.0f register+activate/s)", devices,
            seconds(since: setup), Double(devices) / seconds(since: setup)))
    for item in 0..<100 { quotes.push("item\(item)", ["last_price": "50"]) }
    await module.settle()
    setup = ContinuousClock.now
    let start = ContinuousClock.now
    for item in 0..<100 { quotes.push("item\(item)", ["last_price": "150"]) }
    var committedAt: Double?
    while await module.currentStatistics.delivered < devices {
        if committedAt == nil, await module.currentStatistics.triggered >= devices { committedAt = seconds(since: start) }
        if seconds(since: start) > 600 { fail("timed out: \(await module.currentStatistics)") }
        try await Task.sleep(for: .milliseconds(5))
    }
    let elapsed = seconds(since: start)
    let triggered = try await store.allSubscriptions(status: .triggered).count
    let stats = await module.currentStatistics
    print(
        String(
            format: "pipeline: %d triggered notifications delivered to the HTTP/2 APNs server in %.2f s = %.0f notifications/s",
            stats.delivered, elapsed, Double(stats.delivered) / elapsed))
    if let committedAt {
        print(String(format: "  of which: all %d triggers committed (TRIGGERED in the store) after %.2f s", devices, committedAt))
    }
    print(
        "check: \(triggered) subscriptions TRIGGERED in the store, \(apns.requests.count) requests at the server, retried \(stats.retried), dropped \(stats.dropped)"
    )
    await module.shutdown()
    await store.close()
    try? await client.shutdown()
    await apns.shutdown()
}

switch command {
case "bench-pipeline":
    try await benchPipeline(devices: args.count >= 2 ? Int(args[1]) ?? 2000 : 2000)
case "crash":
    guard args.count >= 2 else { fail("usage: mpn-helper crash <sqlite path>") }
    try await crash(path: args[1])
case "crash-trigger":
    guard args.count >= 2 else { fail("usage: mpn-helper crash-trigger <sqlite path>") }
    try await crashTrigger(path: args[1])
case "bench-trigger":
    try benchTrigger(iterations: args.count >= 2 ? Int(args[1]) ?? 2_000_000 : 2_000_000)
case "bench-register":
    guard args.count >= 3 else { fail("usage: mpn-helper bench-register sqlite <path> | postgres <url> [n]") }
    let n = args.count >= 4 ? Int(args[3]) ?? 2000 : 2000
    if args[1] == "sqlite" {
        let store = try SQLiteMPNStore(path: args[2])
        try await benchRegister(store: store, count: n, label: "SQLite (WAL, synchronous=FULL)")
        await store.close()
    } else {
        let store = try await PostgresMPNStore.open(url: args[2], schema: "mpn_bench")
        try await benchRegister(store: store, count: n, label: "PostgreSQL (synchronous_commit=on)")
        await store.close()
    }
default:
    fail("unknown command \(command)")
}
