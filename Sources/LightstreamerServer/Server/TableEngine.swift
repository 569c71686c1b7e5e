import TLCP

/// What server sessions need from the item engine. `ItemEngine` conforms; tests may plug in
/// a fake. Handles are opaque to sessions.
public protocol TableEngine: Sendable {
    /// The adapter set of that name, if configured.
    func adapterSet(named name: String) -> AdapterSet?
    /// Starts a subscription; its events go to `sink`, serially.
    func subscribeTable(_ spec: TableSpec, sink: any TableSink) async throws(SessionRefusal) -> any Sendable
    /// Ends a subscription; no event reaches the sink after this returns.
    func unsubscribeTable(_ handle: any Sendable) async
    /// Changes the frequency of a subscription and returns the one now granted.
    func setTableFrequency(_ handle: any Sendable, _ frequency: RequestedFrequency) async throws(SessionRefusal) -> GrantedFrequency
    /// The frequency granted to a subscription.
    func grantedTableFrequency(_ handle: any Sendable) -> GrantedFrequency
    /// Stops every adapter.
    func shutdownEngine() async
}
