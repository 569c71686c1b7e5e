import CoreMetrics
import LightstreamerServer
import NIOConcurrencyHelpers

/// The MPN Module's swift-metrics (docs/METRICS.md): notifications by outcome, the time a
/// provider took to answer, and the HTTP status codes APNs and FCM answered with, per platform
/// and application. Application ids come from clients' registrations (any id where a `*`
/// application is configured): at most `maxLabelSets` distinct (platform, app) pairs get
/// series of their own, later ones are counted under app `other`.
public final class MPNMetrics: Sendable {
    static let maxLabelSets = 100

    private let factory: any MetricsFactory
    private let handles = NIOLockedValueBox<[String: Counter]>([:])
    private let timers = NIOLockedValueBox<[String: Timer]>([:])
    private let apps = NIOLockedValueBox<Set<String>>([])

    public init(factory: any MetricsFactory) {
        self.factory = factory
    }

    public convenience init(backend: MetricsBackend) {
        self.init(factory: backend.factory)
    }

    /// Metrics into whatever the process bootstrapped (`MetricsSystem.factory`).
    public static func global() -> MPNMetrics { MPNMetrics(factory: MetricsSystem.factory) }

    /// `app`, or `other` once too many distinct apps were seen.
    private func appLabel(_ platform: String, _ app: String) -> String {
        apps.withLockedValue { seen in
            let key = platform + "/" + app
            if seen.contains(key) { return app }
            guard seen.count < Self.maxLabelSets else { return "other" }
            seen.insert(key)
            return app
        }
    }

    private func counter(_ name: String, _ dimensions: [(String, String)]) -> Counter {
        let key = name + "|" + dimensions.map { $0.0 + "=" + $0.1 }.joined(separator: ",")
        return handles.withLockedValue { h in
            if let c = h[key] { return c }
            let c = Counter(label: name, dimensions: dimensions, factory: factory)
            h[key] = c
            return c
        }
    }

    /// A notification's outcome: `delivered`, `rejected`, `device_invalid`, `retry`,
    /// `auth_failed` (provider answers) or `dropped` (never sent: no provider, over the payload
    /// limit, device or subscription gone).
    func notification(platform: String, app: String, outcome: String) {
        counter(
            "lightstreamer_mpn_notifications_total",
            [("platform", platform), ("app", appLabel(platform, app)), ("outcome", outcome)]
        ).increment()
    }

    /// How long the provider took to answer one send.
    func delivery(platform: String, app: String, nanoseconds: Int64) {
        let label = appLabel(platform, app)
        let timer = timers.withLockedValue { t -> Timer in
            let key = platform + "/" + label
            if let existing = t[key] { return existing }
            let made = Timer(
                label: "lightstreamer_mpn_delivery_duration_seconds", dimensions: [("platform", platform), ("app", label)],
                factory: factory)
            t[key] = made
            return made
        }
        timer.recordNanoseconds(max(0, nanoseconds))
    }

    /// An HTTP status APNs or FCM answered with (`provider`: `apns`, `fcm`, `fcm_token`).
    public func providerStatus(provider: String, app: String, status: Int) {
        let code = (100...599).contains(status) ? String(status) : "invalid"
        counter(
            "lightstreamer_mpn_provider_responses_total",
            [("provider", provider), ("app", appLabel(provider, app)), ("status", code)]
        ).increment()
    }
}

extension MPNMetrics {
    /// One send's latency and outcome.
    func sent(_ n: MPNNotification, _ result: MPNDeliveryResult, since started: ContinuousClock.Instant) {
        let (s, a) = (ContinuousClock.now - started).components
        let (ns, overflow) = s.multipliedReportingOverflow(by: 1_000_000_000)
        delivery(
            platform: n.platform.rawValue, app: n.applicationId,
            nanoseconds: overflow ? Int64.max : ns.addingReportingOverflow(a / 1_000_000_000).partialValue)
        notification(platform: n.platform.rawValue, app: n.applicationId, outcome: result.metricOutcome)
    }
}

extension MPNDeliveryResult {
    /// The `outcome` label of `lightstreamer_mpn_notifications_total`.
    var metricOutcome: String {
        switch self {
        case .delivered: return "delivered"
        case .rejected: return "rejected"
        case .deviceInvalid: return "device_invalid"
        case .retry: return "retry"
        case .authenticationFailed: return "auth_failed"
        }
    }
}
