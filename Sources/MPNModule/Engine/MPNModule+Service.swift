import ServiceLifecycle

/// The MPN Module as a swift-service-lifecycle `Service`: its delivery, timers and store watch
/// run from `start()` until `shutdown()`.
extension MPNModule: Service {
    /// Starts the module (if needed), keeps it running until graceful shutdown or
    /// cancellation, then shuts it down.
    public nonisolated func run() async throws {
        try await start()
        try? await gracefulShutdown()
        await shutdown()
    }
}
