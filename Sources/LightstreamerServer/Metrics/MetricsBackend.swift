import CoreMetrics
import Prometheus

/// Where a server's swift-metrics counters, gauges and timers go, and what its `/metrics`
/// endpoint exports (docs/METRICS.md).
///
/// The server never calls `MetricsSystem.bootstrap`: an embedding application keeps the
/// global metrics system to itself. Each server makes its metrics with the factory given here:
/// - `.prometheus()` (the default): a Prometheus registry of this server's own, exported on
///   `/metrics`. Many servers in one process (tests) each get their own registry.
/// - `.custom(factory, exporting:)`: the embedder's backend (for example
///   `MetricsSystem.factory` after its own `MetricsSystem.bootstrap(…)`); `/metrics` exports
///   `registry` when one is given, else only the node's own figures (node name, readiness).
public struct MetricsBackend: Sendable {
    /// Makes every counter, gauge and timer of the server (and of its MPN Module).
    public let factory: any MetricsFactory
    /// The registry `/metrics` renders, if any.
    public let registry: PrometheusCollectorRegistry?

    /// Instruments made by `factory`; `/metrics` renders `registry` when there is one.
    public init(factory: any MetricsFactory, registry: PrometheusCollectorRegistry?) {
        self.factory = factory
        self.registry = registry
    }

    /// Metrics in `registry` (a new one by default), exported on `/metrics`.
    public static func prometheus(_ registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) -> MetricsBackend {
        MetricsBackend(factory: PrometheusMetricsFactory(registry: registry), registry: registry)
    }

    /// Metrics made by `factory`; `/metrics` exports `registry` when given.
    public static func custom(_ factory: any MetricsFactory, exporting registry: PrometheusCollectorRegistry? = nil) -> MetricsBackend {
        MetricsBackend(factory: factory, registry: registry)
    }

    func counter(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Counter {
        CoreMetrics.Counter(label: name, dimensions: dimensions, factory: factory)
    }

    func floatingCounter(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.FloatingPointCounter {
        CoreMetrics.FloatingPointCounter(label: name, dimensions: dimensions, factory: factory)
    }

    func gauge(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Gauge {
        CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory)
    }

    func timer(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: name, dimensions: dimensions, factory: factory)
    }
}
