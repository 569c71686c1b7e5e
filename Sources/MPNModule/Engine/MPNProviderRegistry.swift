import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import TLCP

/// The providers by (platform, application id), built from the configuration's applications
/// (credential files are read here) or given directly (tests). An application that no entry
/// matches is unknown (error 43).
public final class MPNProviderRegistry: Sendable {
    private let explicit: NIOLockedValueBox<[String: any MPNProvider]>
    private let built = NIOLockedValueBox<[String: any MPNProvider]>([:])
    private let configuration: MPNConfiguration
    private let clock: any MPNWallClock
    private let httpClient: HTTPClient?
    private let logger: Logger
    private let metrics: MPNMetrics?

    /// - Parameters:
    ///   - providers: fixed providers keyed `"Apple/<appId>"` or `"Google/<appId>"` (`*` for any app);
    ///     they win over the configuration.
    ///   - httpClient: shared client for APNs/FCM (nil: each provider makes its own).
    public init(
        configuration: MPNConfiguration, providers: [String: any MPNProvider] = [:], httpClient: HTTPClient? = nil,
        clock: any MPNWallClock = SystemWallClock(), logger: Logger = Logger(label: "lightstreamer.mpn"),
        metrics: MPNMetrics? = nil
    ) {
        self.metrics = metrics
        self.configuration = configuration
        self.explicit = NIOLockedValueBox(providers)
        self.httpClient = httpClient
        self.clock = clock
        self.logger = logger
    }

    public static func key(_ platform: MPNPlatform, _ appId: String) -> String { "\(platform.rawValue)/\(appId)" }

    /// Whether (platform, app) is served.
    public func knows(_ platform: MPNPlatform, _ appId: String) -> Bool {
        let fixed = explicit.withLockedValue { $0[Self.key(platform, appId)] ?? $0[Self.key(platform, "*")] }
        return fixed != nil || configuration.application(platform, appId) != nil
    }

    /// The provider for (platform, app); nil if unknown or its credentials cannot be loaded.
    public func provider(_ platform: MPNPlatform, _ appId: String) -> (any MPNProvider)? {
        if let p = explicit.withLockedValue({ $0[Self.key(platform, appId)] ?? $0[Self.key(platform, "*")] }) { return p }
        guard let app = configuration.application(platform, appId) else { return nil }
        let key = Self.key(platform, app.id == "*" ? "*" : appId)
        if let p = built.withLockedValue({ $0[key] }) { return p }
        do {
            let p = try make(platform, appId: appId, app: app)
            return built.withLockedValue { b in
                if let existing = b[key] { return existing }
                b[key] = p
                return p
            }
        } catch {
            logger.critical(
                "MPN provider cannot be configured",
                metadata: [
                    "platform": "\(platform.rawValue)", "app": "\(appId)",
                    "error": "\(String(describing: error).logEscaped())",
                ])
            return nil
        }
    }

    private func make(_ platform: MPNPlatform, appId: String, app: MPNConfiguration.Application) throws -> any MPNProvider {
        if app.serviceLevel == .test {
            return LogProvider(destination: app.logFile.map { .file(path: $0) } ?? .standardError, clock: clock)
        }
        switch platform {
        case .apple:
            guard let team = app.teamId, let keyId = app.keyId, let file = app.keyFile else {
                throw MPNStoreError("Apple app \(app.id) needs teamId, keyId and keyFile")
            }
            let pem = try String(contentsOfFile: file, encoding: .utf8)
            let base = app.baseURL ?? (app.serviceLevel == .production ? APNsConfiguration.productionURL : APNsConfiguration.developmentURL)
            return try APNsProvider(
                applicationId: appId,
                configuration: APNsConfiguration(
                    baseURL: base, teamId: team, keyId: keyId, privateKeyPEM: pem,
                    topic: app.topic),
                httpClient: httpClient, clock: clock, logger: logger, metrics: metrics)
        case .google:
            guard let file = app.serviceAccountFile else { throw MPNStoreError("Google app \(app.id) needs serviceAccountFile") }
            let account = try FCMServiceAccount.parse(try Data(contentsOf: URL(fileURLWithPath: file)))
            return try FCMProvider(
                configuration: FCMConfiguration(
                    serviceAccount: account, baseURL: app.baseURL ?? FCMConfiguration.productionURL,
                    validateOnly: app.serviceLevel == .dryRun),
                httpClient: httpClient, clock: clock, logger: logger, metrics: metrics)
        }
    }

    public func shutdown() async {
        let all = built.withLockedValue { Array($0.values) }
        for p in all { await p.shutdown() }
    }
}
