import TLCP

/// The item engine as the sessions use it.
extension ItemEngine: TableEngine {
    public func subscribeTable(_ spec: TableSpec, sink: any TableSink) async throws(SessionRefusal) -> any Sendable {
        do {
            return try await subscribe(spec, sink: sink)
        } catch {
            throw SessionRefusal(code: error.code, message: error.message)
        }
    }

    public func unsubscribeTable(_ handle: any Sendable) async {
        guard let handle = handle as? TableHandle else { return }
        await unsubscribe(handle)
    }

    public func setTableFrequency(_ handle: any Sendable, _ frequency: RequestedFrequency) async throws(SessionRefusal) -> GrantedFrequency {
        guard let handle = handle as? TableHandle else { throw SessionRefusal(code: 19, message: "Subscription not found") }
        do {
            try await setMaxFrequency(handle, frequency)
        } catch {
            throw SessionRefusal(code: error.code, message: error.message)
        }
        return grantedFrequency(of: handle)
    }

    public func grantedTableFrequency(_ handle: any Sendable) -> GrantedFrequency {
        guard let handle = handle as? TableHandle else { return .unlimited }
        return grantedFrequency(of: handle)
    }

    public func shutdownEngine() async { await shutdown() }
}
