import Foundation

/// Where `MPNDevice` keeps the last device token per application id, so that a token change is
/// sent as `PN_newDeviceToken` (the role UserDefaults plays on Apple platforms). One small file
/// per application id under `directory`.
public struct MPNTokenStore: Sendable {
    /// The folder holding the stored tokens.
    public let directory: URL

    /// A store under `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// `$LS_MPN_STORE_DIR`, else `$XDG_CONFIG_HOME/lightstreamer/mpn`, else
    /// `~/.config/lightstreamer/mpn` (on Apple platforms, Application Support).
    public static var defaultDirectory: URL {
        let env = ProcessInfo.processInfo.environment
        if let d = env["LS_MPN_STORE_DIR"], !d.isEmpty { return URL(fileURLWithPath: d, isDirectory: true) }
        #if os(Linux)
        if let x = env["XDG_CONFIG_HOME"], !x.isEmpty {
            return URL(fileURLWithPath: x, isDirectory: true).appendingPathComponent("lightstreamer/mpn", isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/lightstreamer/mpn", isDirectory: true)
        #else
        let base =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.homeDirectoryForCurrentUser
        return base.appendingPathComponent("lightstreamer/mpn", isDirectory: true)
        #endif
    }

    /// A store under `defaultDirectory`.
    public static var `default`: MPNTokenStore { MPNTokenStore(directory: defaultDirectory) }

    private func file(platform: String, applicationId: String) -> URL {
        let safe = (platform + "_" + applicationId).unicodeScalars.map { u -> String in
            let c = Character(u)
            return (c.isLetter || c.isNumber || c == "." || c == "-" || c == "_") && u.isASCII
                ? String(c) : "%" + String(u.value, radix: 16)
        }.joined()
        return directory.appendingPathComponent(safe + ".token")
    }

    /// The token stored for this application, if any.
    public func token(platform: String, applicationId: String) -> String? {
        guard let data = try? Data(contentsOf: file(platform: platform, applicationId: applicationId)),
            let s = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !s.isEmpty
        else { return nil }
        return s
    }

    /// Stores the token (best effort: a failure to write only loses the rotation hint).
    public func store(_ token: String, platform: String, applicationId: String) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(token.utf8).write(to: file(platform: platform, applicationId: applicationId), options: .atomic)
        } catch {
            LogManager.session?.warn("Cannot store the MPN device token: \(error)")
        }
    }
}
