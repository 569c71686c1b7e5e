import TLCP

/// The item engine as the sessions use it.
extension ItemEngine: TableEngine {
    /// Subscribes through the engine; an engine refusal becomes a `SessionRefusal` with its code.
    public func subscribeTable(_ spec: TableSpec, sink: any TableSink) async throws(SessionRefusal) -> any Sendable {
        do {
            return try await subscribe(spec, sink: sink)
        } catch {
            throw SessionRefusal(code: error.code, message: error.message)
        }
    }

    /// Unsubscribes a handle this engine gave (others are ignored).
    public func unsubscribeTable(_ handle: any Sendable) async {
        guard let handle = handle as? TableHandle else { return }
        await unsubscribe(handle)
    }

    /// Changes the frequency of a handle this engine gave; an unknown handle is refused with 19.
    public func setTableFrequency(_ handle: any Sendable, _ frequency: RequestedFrequency) async throws(SessionRefusal) -> GrantedFrequency {
        guard let handle = handle as? TableHandle else { throw SessionRefusal(code: 19, message: "Subscription not found") }
        do {
            try await setMaxFrequency(handle, frequency)
        } catch {
            throw SessionRefusal(code: error.code, message: error.message)
        }
        return grantedFrequency(of: handle)
    }

    /// The frequency granted to a handle this engine gave (`unlimited` for others).
    public func grantedTableFrequency(_ handle: any Sendable) -> GrantedFrequency {
        guard let handle = handle as? TableHandle else { return .unlimited }
        return grantedFrequency(of: handle)
    }

    /// Shuts the engine down (`shutdown()`).
    public func shutdownEngine() async { await shutdown() }
}
