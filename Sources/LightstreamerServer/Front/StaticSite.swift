import Foundation

/// The files of the server's own pages (`Web/`: HTML, scripts, styles), read once and kept in
/// memory, so that serving them does no disk I/O on an event loop. Bounded: at most `maxFiles`
/// files of at most `maxFileBytes` each, with names of `[A-Za-z0-9._-]` only (no folders, no
/// hidden files); anything else in the folder is skipped.
struct StaticSite: Sendable {
    struct File: Sendable, Equatable {
        let body: [UInt8]
        let contentType: String
        /// A strong validator of the content (FNV-1a 64, quoted).
        let etag: String
    }

    static let maxFiles = 64
    static let maxFileBytes = 1 << 20

    let files: [String: File]

    init(files: [String: File]) { self.files = files }

    /// The files of `directory` (an empty site when it is nil or unreadable).
    static func load(directory: URL?) -> StaticSite {
        guard let directory,
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return StaticSite(files: [:]) }
        var files: [String: File] = [:]
        for name in names.sorted() where isValidName(name) && files.count < maxFiles {
            let url = directory.appendingPathComponent(name)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = (attributes[.size] as? NSNumber)?.intValue, size <= maxFileBytes,
                let data = try? Data(contentsOf: url), data.count <= maxFileBytes,
                let type = contentType(of: name)
            else { continue }
            let body = [UInt8](data)
            files[name] = File(body: body, contentType: type, etag: etag(of: body))
        }
        return StaticSite(files: files)
    }

    /// A file name the site serves: letters, digits, `.`, `_`, `-`, not starting with a dot,
    /// at most 64 characters (so never `..`, a path or a hidden file).
    static func isValidName(_ name: some StringProtocol) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 64, name.first != "." else { return false }
        return name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
        }
    }

    /// Only the types the pages use; other files are not served.
    static func contentType(of name: String) -> String? {
        switch name.split(separator: ".").last.map({ $0.lowercased() }) {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        default: nil
        }
    }

    static func etag(of bytes: [UInt8]) -> String {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        return "\"" + String(h, radix: 16) + "\""
    }

    /// The asset under `web/<name>`, if the name is valid and the file is there.
    func asset(_ name: Substring) -> File? {
        guard Self.isValidName(name) else { return nil }
        return files[String(name)]
    }

    /// Where the pages are: `LS_WEB_ROOT` when set; else the `Web` folder of the target's
    /// resource bundle next to the executable (`swift build`, tests, a copied release build
    /// with its `.resources` folder); else the source folder (`swift run` from a checkout).
    static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let root = environment["LS_WEB_ROOT"], !root.isEmpty { return URL(fileURLWithPath: root) }
        var candidates: [URL] = []
        let bundleName = "lightstreamer-swift_LightstreamerServer.resources"
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        candidates.append(executable.deletingLastPathComponent().appendingPathComponent(bundleName).appendingPathComponent("Web"))
        candidates.append(Bundle.main.bundleURL.appendingPathComponent(bundleName).appendingPathComponent("Web"))
        candidates.append(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Web"))
        for c in candidates where FileManager.default.fileExists(atPath: c.appendingPathComponent("index.html").path) {
            return c
        }
        return nil
    }
}
