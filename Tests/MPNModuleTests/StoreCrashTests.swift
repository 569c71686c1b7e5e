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
        nonisolated(unsafe) let child = process
        nonisolated(unsafe) let output = pipe
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
}
