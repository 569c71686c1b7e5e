import Foundation

/// The official Lightstreamer Python client (`lightstreamer-client-lib`, pinned in
/// `Tests/Interop/requirements.txt`) for the cluster test: the python of the venv that
/// `scripts/test.sh` prepares (`LS_INTEROP_PYTHON`, `.venv-interop`) or that InteropTests made.
enum OfficialPythonClient {
    static let interopDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Interop")

    static var python: String? {
        let root = interopDir.deletingLastPathComponent().deletingLastPathComponent()
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["LS_INTEROP_PYTHON"],
            root.appendingPathComponent(".venv-interop/bin/python").path,
            interopDir.appendingPathComponent(".venv/bin/python").path,
        ]
        return candidates.compactMap { $0 }.first { !$0.isEmpty && FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The JSON lines the driver printed so far with `"event": event`.
    static func events(_ event: String, in text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{"), let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                obj["event"] as? String == event
            else { return nil }
            return obj
        }
    }
}
