// MPN test and benchmark helper.
//   mpn-helper crash <sqlite path>            registers devices and subscriptions forever, printing
//                                             "ACK <deviceId> <subscriptionId>" after each committed
//                                             write (the kill -9 test of MPNModuleTests kills it)
//   mpn-helper bench-trigger [iterations]     trigger evaluations per second
//   mpn-helper bench-register sqlite <path> [n] | postgres <url> [n]
//                                             durable device registrations per second
import Foundation
import MPNModule

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
        let sub = MPNSubscriptionRecord(id: UUID().uuidString.lowercased(), deviceId: device.id, adapterSet: "DEMO",
                                        dataAdapter: "DEFAULT", group: "item\(i)", items: ["item\(i)"], schema: "f", fields: ["f"],
                                        mode: .merge, notificationFormat: #"{"aps":{"alert":"x"}}"#, trigger: nil,
                                        statusTimestamp: now, createdAt: now)
        try await store.insertSubscription(sub)
        // Unbuffered write so that an acknowledgement printed is an acknowledgement seen.
        FileHandle.standardOutput.write(Data("ACK \(device.id) \(sub.id)\n".utf8))
    }
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
        print(String(format: "%.0f evaluations/s  (%d in %.3f s, %d true)  %@", Double(iterations) / seconds, iterations, seconds,
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
                    _ = try await store.registerDevice(platform: .google, applicationId: "bench.app", token: "\(run)-c\(t)-\(i)",
                                                       now: Int64(i))
                }
            }
        }
        try await group.waitForAll()
    }
    elapsed = ContinuousClock.now - start
    seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(String(format: "%@: %.0f registrations/s with 8 concurrent clients (%d in %.2f s)", label,
                 Double(count / 8 * 8) / seconds, count / 8 * 8, seconds))
}

switch command {
case "crash":
    guard args.count >= 2 else { fail("usage: mpn-helper crash <sqlite path>") }
    try await crash(path: args[1])
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
