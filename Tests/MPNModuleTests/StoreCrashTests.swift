import Foundation
import Testing

@testable import MPNModule

#if canImport(Glibc)
import Glibc
#endif

/// A child process writes to the SQLite store and prints each acknowledged write; it is then
/// killed with SIGKILL mid-stream. Reopening the file must find every acknowledged write.
@Suite("SQLite store durability")
struct StoreCrashTests {
    static func helperPath() -> String? {
        let exe = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("mpn-helper").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    @Test("kill -9 loses nothing acknowledged")
    func killNine() async throws {
        let helper = try #require(Self.helperPath(), "build the helper: swift build --product mpn-helper")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mpn-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("mpn.sqlite").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: helper)
        process.arguments = ["crash", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let target = 40
        // Blocking reads run on their own thread, not on the (2-thread) cooperative pool.
        let child = process
        let output = pipe
        let acked: [(String, String)] = await withCheckedContinuation { continuation in
            Thread {
                var buffer = Data()
                var acks: [(String, String)] = []
                let reader = output.fileHandleForReading
                while acks.count < target {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let nl = buffer.firstIndex(of: 0x0A) {
                        let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                        buffer.removeSubrange(buffer.startIndex...nl)
                        let parts = line.split(separator: " ")
                        if parts.count == 3, parts[0] == "ACK" { acks.append((String(parts[1]), String(parts[2]))) }
                    }
                }
                // Kill while it keeps writing; lines still in the pipe are acknowledged too.
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
                buffer.append(reader.readDataToEndOfFile())
                for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") {
                    let parts = line.split(separator: " ")
                    if parts.count == 3, parts[0] == "ACK" { acks.append((String(parts[1]), String(parts[2]))) }
                }
                continuation.resume(returning: acks)
            }.start()
        }
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(acked.count >= target)
        let store = try SQLiteMPNStore(path: path)
        for (deviceId, subId) in acked {
            #expect(try await store.device(id: deviceId) != nil, "device \(deviceId) acknowledged but lost")
            #expect(try await store.subscription(id: subId)?.deviceId == deviceId, "subscription \(subId) acknowledged but lost")
        }
        await store.close()
    }

    /// Runs the helper with `arguments`, reads its output lines until `enough` says so, kills
    /// it with SIGKILL and returns every line it printed (those still in the pipe included).
    static func runAndKill(
        _ arguments: [String], until enough: @escaping @Sendable ([String]) -> Bool
    ) async throws
        -> (lines: [String], killed: Bool)
    {
        let helper = try #require(Self.helperPath(), "build the helper: swift build --product mpn-helper")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: helper)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let child = process
        let output = pipe
        let lines: [String] = await withCheckedContinuation { continuation in
            Thread {
                var buffer = Data()
                var lines: [String] = []
                let reader = output.fileHandleForReading
                while !enough(lines) {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let nl = buffer.firstIndex(of: 0x0A) {
                        lines.append(String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self))
                        buffer.removeSubrange(buffer.startIndex...nl)
                    }
                }
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
                buffer.append(reader.readDataToEndOfFile())
                lines += String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
                continuation.resume(returning: lines)
            }.start()
        }
        return (lines, process.terminationReason == .uncaughtSignal)
    }

    @Test("kill -9 between the trigger's commit and its send: the restarted module sends it exactly once")
    func killNineBeforeSend() async throws {
        let h = EngineHarness()
        defer { h.cleanUp() }
        let (lines, killed) = try await Self.runAndKill(["crash-trigger", h.path]) { lines in
            lines.contains { $0.hasPrefix("SENDING ") }
        }
        #expect(killed)
        let ack = try #require(lines.first { $0.hasPrefix("ACK ") }?.split(separator: " "))
        let sending = try #require(lines.first { $0.hasPrefix("SENDING ") }?.split(separator: " "))
        try #require(ack.count == 3 && sending.count == 3)
        let (deviceId, subscriptionId, key) = (String(ack[1]), String(ack[2]), String(sending[2]))
        #expect(String(sending[1]) == subscriptionId)

        // Everything acknowledged survived, and the notification is owed.
        let store = try SQLiteMPNStore(path: h.path)
        #expect(try await store.device(id: deviceId)?.deviceToken == "0a01")
        #expect(try await store.subscription(id: subscriptionId)?.status == .triggered)
        #expect(try await store.outboxEntries(status: .pending).map(\.id) == [key])

        let (module, _) = try h.makeModule(store: store)
        try await module.start()
        await module.settle()
        #expect(h.provider.alerts() == ["ACME at 150"])
        #expect(h.provider.notifications.map(\.idempotencyKey) == [key], "resent under the id of the first attempt")
        #expect(h.provider.notifications.first?.payload.serialized == #"{"aps":{"alert":"ACME at 150","badge":1}}"#)
        #expect(try await store.outboxEntries(status: nil).isEmpty)
        await module.shutdown()
        await store.close()

        // Another restart sends nothing more.
        let (again, store2) = try await h.startModule()
        await again.settle()
        #expect(h.provider.notifications.count == 1)
        await again.shutdown()
        await store2.close()
    }
}
